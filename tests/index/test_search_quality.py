"""Search quality in every language our users write: recall on a small multilingual set.

The notes and queries are our own (Chinese, Japanese, Korean, English, mixed
scripts, code identifiers), written into a real workspace and searched through
``Memory.search``, the operation the MCP tool calls. The bar is recall@5: a
note not in the top five is a note the model never sees.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reme_mcp.config import load_settings
from reme_mcp.errors import ReMeError
from reme_mcp.ops.memory import Memory

# name -> (description, body)
NOTES: dict[str, tuple[str, str]] = {
    # Chinese
    "zh-cat": ("用户的猫", "我的猫叫小白，今年三岁，最喜欢吃鱼。"),
    "zh-go-backend": ("后端技术栈", "用户喜欢用 Go 写后端服务，数据库用 PostgreSQL。"),
    "zh-password-policy": ("公司密码规定", "公司规定密码每九十天更换一次，长度至少十二位。"),
    "zh-travel-chengdu": ("成都旅行", "十月去成都旅行，吃了火锅，还去了熊猫基地。"),
    "zh-release-freeze": ("发布安排", "春节前一周代码冻结，只允许修复严重缺陷。"),
    "zh-allergy": ("饮食注意", "用户对花生过敏，点餐时要提醒服务员。"),
    "zh-meeting": ("例会", "每周三下午三点开产品评审会，地点在五楼会议室。"),
    # Japanese
    "ja-sushi": ("週末の食事", "週末に築地で寿司を食べた。マグロが一番おいしかった。"),
    "ja-kubernetes": ("本番環境", "本番環境は Kubernetes で動いている。デプロイは毎週火曜日。"),
    "ja-tokyo-move": ("引っ越し", "来年の春に大阪から東京へ引っ越す予定。"),
    "ja-piano": ("娘の習い事", "娘はピアノ教室に通っていて、発表会は十二月。"),
    "ja-coffee": ("朝の習慣", "毎朝ハンドドリップでコーヒーを淹れる。豆はエチオピア産が好き。"),
    "ja-backup": ("運用", "バックアップは毎晩二時に取得し、三十日間保存する。"),
    # Korean
    "ko-kimchi": ("요리", "어머니가 김치찌개 만드는 법을 알려주셨다. 돼지고기를 먼저 볶는다."),
    "ko-marathon": ("운동 계획", "다음 달에 서울 마라톤 하프 코스에 참가한다."),
    "ko-laptop": ("장비", "새 노트북은 맥북 프로 14인치, 메모리 32기가."),
    "ko-study": ("공부 습관", "매일 아침 영어 단어 스무 개를 외운다."),
    "ko-dentist": ("일정", "치과 예약은 금요일 오후 네 시."),
    # English
    "en-espresso": ("Coffee habit", "The user drinks a double espresso every morning at the café on Main Street."),
    "en-hiking": ("Holidays", "Went hiking in the Dolomites last summer; the Tre Cime loop took six hours."),
    "en-deploy": (
        "Release process",
        "Deployments go through the staging cluster first; rollbacks use the previous Helm release.",
    ),
    "en-birthday": ("Family", "Emma's birthday is on March 14; she wants a telescope."),
    "en-vegetarian": ("Diet", "The user has been vegetarian since 2019 and avoids fish sauce."),
    "en-guitar": ("Hobbies", "Practising fingerstyle guitar; currently learning Blackbird by the Beatles."),
    "en-tax": ("Paperwork", "Tax documents are due to the accountant by April 1st; receipts are in the shared drive."),
    # Code identifiers
    "id-snake": ("Invoices", "The helper `parse_invoice_total` rounds to two decimals before summing."),
    "id-camel": ("Invoices", "`InvoiceParserFactory` picks a parser by the supplier's country code."),
    "id-file": ("Billing", "The retry logic lives in `billing_client.py`; it backs off exponentially."),
    "id-error": ("Payments", "Intermittent ERR_CONN_RESET from the payment gateway when keep-alive is off."),
    # Mixed scripts, accents, full width
    "mixed-zh-en": ("API 变更", "v2.3 版本的 API 增加了分页参数 page_size，默认是 50。"),
    "mixed-ja-en": ("通知", "Slack の通知は #alerts チャンネルに送る。on-call は週替わり。"),
    "mixed-ko-en": ("빌드", "Docker 이미지는 GitHub Actions 에서 매일 밤 빌드된다."),
    "fr-accents": ("Paris", "Rendez-vous au Café de Flore à Paris, pour la crème brûlée."),
    "fullwidth": ("期限", "ＡＰＩキーの更新期限は２０２７年１月です。"),
}

# (query, the note it must find)
QUERIES: list[tuple[str, str]] = [
    ("猫叫什么名字", "zh-cat"),
    ("后端", "zh-go-backend"),
    ("用什么语言写后端", "zh-go-backend"),
    ("密码多久更换", "zh-password-policy"),
    ("成都 火锅", "zh-travel-chengdu"),
    ("熊猫", "zh-travel-chengdu"),
    ("代码冻结", "zh-release-freeze"),
    ("花生", "zh-allergy"),
    ("过敏", "zh-allergy"),
    ("评审会在哪里开", "zh-meeting"),
    ("寿司", "ja-sushi"),
    ("マグロ", "ja-sushi"),
    ("デプロイは何曜日", "ja-kubernetes"),
    ("東京に引っ越し", "ja-tokyo-move"),
    ("ピアノの発表会", "ja-piano"),
    ("コーヒー豆", "ja-coffee"),
    ("バックアップの保存", "ja-backup"),
    ("김치찌개", "ko-kimchi"),
    ("마라톤", "ko-marathon"),
    ("노트북 메모리", "ko-laptop"),
    ("영어 단어", "ko-study"),
    ("치과 예약", "ko-dentist"),
    ("where does the user get espresso", "en-espresso"),
    ("hike in the Dolomites", "en-hiking"),
    ("how do rollbacks work", "en-deploy"),
    ("Emma birthday present", "en-birthday"),
    ("is the user vegetarian", "en-vegetarian"),
    ("which song is the user learning on guitar", "en-guitar"),
    ("when are the tax documents due", "en-tax"),
    ("parse_invoice_total", "id-snake"),
    ("invoice total", "id-snake"),
    ("InvoiceParserFactory", "id-camel"),
    ("parser factory", "id-camel"),
    ("billing_client.py", "id-file"),
    ("billing client", "id-file"),
    ("ERR_CONN_RESET", "id-error"),
    ("conn reset", "id-error"),
    ("v2.3 分页", "mixed-zh-en"),
    ("page_size 默认", "mixed-zh-en"),
    ("Slack 通知", "mixed-ja-en"),
    ("on-call", "mixed-ja-en"),
    ("Docker 이미지", "mixed-ko-en"),
    ("GitHub Actions 빌드", "mixed-ko-en"),
    ("cafe de flore", "fr-accents"),
    ("CRÈME BRULEE", "fr-accents"),
    ("APIキー 2027", "fullwidth"),
]

# Each identifier, whole and by its parts, in other cases and spellings.
IDENTIFIER_QUERIES: list[tuple[str, str]] = [
    ("parse_invoice_total", "id-snake"),
    ("PARSE_INVOICE_TOTAL", "id-snake"),
    ("parse invoice", "id-snake"),
    ("InvoiceParserFactory", "id-camel"),
    ("invoiceparserfactory", "id-camel"),
    ("ParserFactory", "id-camel"),
    ("factory", "id-camel"),
    ("billing_client.py", "id-file"),
    ("billing_client", "id-file"),
    ("billing", "id-file"),
    ("ERR_CONN_RESET", "id-error"),
    ("err_conn_reset", "id-error"),
    ("CONN_RESET", "id-error"),
    ("reset", "id-error"),
]

MALFORMED_QUERIES = [
    '"unbalanced quote',
    "'single",
    'say "hello',
    "AND",
    "OR",
    "NOT",
    "AND OR NOT",
    "cat AND",
    "NOT NOT",
    "((",
    ")]}",
    "!!!???",
    "*",
    "?",
    "~",
    "^2",
    "content:",
    "name:猫",
    "[a TO",
    "---",
    "、。！",
    "\x00",
    "🐱🐶",
    "x" * 10_000,
    "猫 " * 5_000,
    "a" * 10_000,
    ("\u4e2d" * 3_000 + " AND ") * 2,
]


def _write_notes(root: Path) -> None:
    for i, (name, (description, body)) in enumerate(sorted(NOTES.items())):
        folder = root / "daily" / f"2026-11-{1 + i % 28:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        text = f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"
        (folder / f"{name}.md").write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    root = tmp_path_factory.mktemp("quality") / ".reme"
    _write_notes(root)
    return Memory(load_settings(workspace=str(root)))


def _top(memory: Memory, query: str, k: int = 5) -> list[str]:
    return [Path(hit.path).stem for hit in memory.search(query, limit=k).results]


def test_the_set_is_large_enough() -> None:
    assert len(NOTES) >= 30
    assert len(QUERIES) >= 40
    assert {expected for _, expected in QUERIES} <= NOTES.keys()


def test_multilingual_recall_at_5(memory: Memory) -> None:
    missed = [(q, expected, _top(memory, q)) for q, expected in QUERIES if expected not in _top(memory, q)]
    recall = 1 - len(missed) / len(QUERIES)
    assert recall >= 0.95, f"recall@5 {recall:.1%}; missed: {missed}"


@pytest.mark.parametrize(("query", "expected"), IDENTIFIER_QUERIES)
def test_identifiers_are_found_whole_and_by_parts(memory: Memory, query: str, expected: str) -> None:
    assert expected in _top(memory, query)


def test_a_two_character_chinese_word_finds_its_note(memory: Memory) -> None:
    assert _top(memory, "花生", k=1) == ["zh-allergy"]


@pytest.mark.parametrize("query", MALFORMED_QUERIES)
def test_malformed_queries_answer_with_results_or_nothing(memory: Memory, query: str) -> None:
    result = memory.search(query, limit=5)
    assert isinstance(result.results, list)
    assert all(hit.path.startswith("daily/") for hit in result.results)


@pytest.mark.parametrize("query", [" ", "\t\n", "\u3000"])
def test_a_blank_query_is_a_one_line_error(memory: Memory, query: str) -> None:
    with pytest.raises(ReMeError, match=r"^the query is blank: give the words to search for") as caught:
        memory.search(query, limit=5)
    assert "\n" not in str(caught.value)


# ---- a phrase a person remembers: the note holding it comes first ------------------------------

# Notes as `remember` writes them when only the content is given: the name and the
# description are the note's first words, so a common word there is in every field.
RECALLED = {
    "noxcynval-cache": "# Noxcynval cache layer notes\n\nNoxcynval shifted the cache layer from Redis to Kafka.",
    "noxcynval-audit": "# Noxcynval audit log notes\n\nNoxcynval decided to freeze the audit log before the demo.",
    "noxcynval-billing": "# Noxcynval billing notes\n\nNoxcynval billing service handled 5000 requests per second.",
    "noxcynval-queue": "# Noxcynval job queue notes\n\nThe Noxcynval job queue dropped the backup of the week.",
    "noxcynval-auth": "# Noxcynval auth gateway notes\n\nNoxcynval auth gateway plan slipped to March.",
    "rosa-race": "# Rosa race condition notes\n\nRosa reviewed the race condition report.",
    "weekly-ops": (
        "# Weekly ops review, week 48\n\nThe on-call rotation changed twice this week and the dashboards were "
        "rebuilt from scratch after the metrics exporter upgrade. Elena proposed splitting the report scheduler. "
        "Later, Noxcynval moved the backup agent to MinIO after the nightly failures. Rosa fixed a race in the "
        "session store that caused login timeouts."
    ),
    "计费-说明": "# 计费服务记录\n\n计费服务的接口文档已经更新。",
    "计费-压测": "# 计费压测记录\n\n计费服务在压测中达到每秒八千次请求。",
    "计费-告警": "# 计费告警记录\n\n计费告警阈值调整为五百毫秒。",
    "青河-周报": (
        "# 青河 周报\n\n本周青河项目把配置加载器从Redis迁移到了Envoy，由周婷负责验收。"
        "值班记录显示夜间备份失败两次，原因是主库磁盘写满。朱琳为计费服务写了操作手册，以后出现看板数据为空时不用半夜叫人。"
    ),
}
RECALL_QUERIES = [
    ("Noxcynval moved the backup", "weekly-ops"),
    ("Rosa fixed a race", "weekly-ops"),
    ("朱琳为计费", "青河-周报"),
]


@pytest.fixture(scope="module")
def recalled(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    root = tmp_path_factory.mktemp("recalled") / ".reme"
    memory = Memory(load_settings(workspace=str(root)))
    for name, content in RECALLED.items():
        memory.remember(content, date="2026-11-28", request_id=name)
    return memory


@pytest.mark.parametrize(("query", "expected"), RECALL_QUERIES)
def test_the_note_holding_the_phrase_comes_first(recalled: Memory, query: str, expected: str) -> None:
    top = [hit.path for hit in recalled.search(query, limit=3).results]
    assert top and top[0].startswith(f"daily/2026-11-28/{expected}"), top
