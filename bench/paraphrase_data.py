"""The paraphrase benchmark's vocabularies: who, what happened, and to what, in English and Chinese.

Every entry holds two wordings per language: the one a note is written with and the one a
query asks with. The two share no content word (bench/paraphrase.py checks each generated
pair with the project's analyzer, and drops a pair that does). A fact is (who, event, what):
notes that share one or two of the three are each other's distractors.
"""

from __future__ import annotations

from typing import NamedTuple


class Forms(NamedTuple):
    en_note: str
    en_query: str
    zh_note: str
    zh_query: str


WHO: dict[str, Forms] = {
    "sister": Forms("my sister", "my sibling", "我姐姐", "我的姊妹"),
    "boss": Forms("my manager", "my boss", "我的经理", "我的上司"),
    "doctor": Forms("the physician", "the doctor", "医生", "大夫"),
    "neighbour": Forms("our neighbour", "the people next door", "邻居", "隔壁那家人"),
    "landlord": Forms("the landlord", "the owner of our flat", "房东", "出租公寓的业主"),
    "grandma": Forms("grandma", "my grandmother", "奶奶", "祖母"),
    "son": Forms("my son", "my boy", "儿子", "家里的男孩"),
    "coworker": Forms("a coworker", "a colleague", "同事", "一起上班的伙伴"),
    "teacher": Forms("the teacher", "the instructor", "老师", "授课的人"),
    "husband": Forms("my husband", "my spouse", "我老公", "我丈夫"),
    "friend": Forms("my friend", "my buddy", "朋友", "哥们"),
    "roommate": Forms("my roommate", "the person I share an apartment with", "室友", "合租的人"),
}

# Things bought, lost, given, fixed, borrowed, wanted.
ITEMS: dict[str, Forms] = {
    "car": Forms("a car", "an automobile", "一辆车", "座驾"),
    "laptop": Forms("a laptop", "a notebook computer", "一台笔记本", "便携电脑"),
    "phone": Forms("a phone", "a mobile", "手机", "移动电话"),
    "piano": Forms("a piano", "a keyboard instrument", "一架钢琴", "键盘乐器"),
    "guitar": Forms("a guitar", "a six-string", "吉他", "六弦琴"),
    "sofa": Forms("a sofa", "a couch", "沙发", "长椅"),
    "camera": Forms("a camera", "a DSLR", "相机", "单反"),
    "wallet": Forms("a wallet", "a billfold", "钱包", "皮夹"),
    "jacket": Forms("a jacket", "a coat", "夹克", "外套"),
    "headphones": Forms("headphones", "earbuds", "耳机", "头戴式音响"),
    "painting": Forms("an oil painting", "artwork on canvas", "油画", "艺术作品"),
    "tent": Forms("a tent", "camping shelter", "帐篷", "露营用具"),
    "drone": Forms("a drone", "a quadcopter", "无人机", "四旋翼飞行器"),
    "blender": Forms("a blender", "a smoothie maker", "搅拌机", "榨汁器"),
}

# Things feared.
FEARS: dict[str, Forms] = {
    "spiders": Forms("spiders", "arachnids", "蜘蛛", "八脚虫"),
    "dogs": Forms("dogs", "canines", "狗", "犬类"),
    "snakes": Forms("snakes", "serpents", "蛇", "长虫"),
    "thunder": Forms("thunderstorms", "lightning", "雷雨", "闪电"),
    "flying": Forms("flying", "airplanes", "坐飞机", "航班"),
    "water": Forms("deep water", "swimming", "深水", "游泳"),
}

# Things that cause an allergy.
ALLERGENS: dict[str, Forms] = {
    "shrimp": Forms("shrimp", "prawns", "虾", "海鲜"),
    "peanuts": Forms("peanuts", "groundnuts", "花生", "坚果"),
    "cats": Forms("cats", "felines", "猫", "喵星人"),
    "milk": Forms("milk", "dairy", "牛奶", "乳制品"),
    "pollen": Forms("pollen", "hay fever season", "花粉", "春季飘絮"),
    "penicillin": Forms("penicillin", "antibiotics", "青霉素", "抗生素"),
}


class Event(NamedTuple):
    objects: dict[str, Forms]
    en_note: str
    en_query: str
    zh_note: str
    zh_query: str


# {w}: who, {o}: what. The note and query wordings of one event share no content word.
EVENTS: dict[str, Event] = {
    "bought": Event(
        ITEMS,
        "{w} bought {o} last weekend.",
        "Did {w} purchase {o}?",
        "{w}上周末买了{o}。",
        "{w}有没有购入{o}？",
    ),
    "lost": Event(
        ITEMS,
        "{w} lost {o} on the train.",
        "Where did {w} misplace {o}?",
        "{w}在地铁上丢了{o}。",
        "{w}把{o}遗失在哪里？",
    ),
    "gift": Event(
        ITEMS,
        "For my birthday {w} gave me {o}.",
        "What present did I receive from {w}? {o}?",
        "我过生日的时候{w}送了我{o}。",
        "{w}赠予我什么礼品？{o}？",
    ),
    "fixed": Event(
        ITEMS,
        "{w} fixed {o} yesterday.",
        "Has {w} repaired {o}?",
        "{w}昨天修好了{o}。",
        "{w}是否已处理{o}的故障？",
    ),
    "borrowed": Event(
        ITEMS,
        "{w} borrowed {o} from me in March.",
        "Does {w} still hold {o} on loan?",
        "{w}三月份向我借了{o}。",
        "{w}是不是拿走{o}还没归还？",
    ),
    "wants": Event(
        ITEMS,
        "{w} would love to get {o} someday.",
        "Is {o} on the wishlist of {w}?",
        "{w}一直很想要{o}。",
        "{w}渴望拥有{o}吗？",
    ),
    "afraid": Event(
        FEARS,
        "{w} is scared of {o}.",
        "Does {o} frighten {w}?",
        "{w}很怕{o}。",
        "{o}会吓到{w}吗？",
    ),
    "allergic": Event(
        ALLERGENS,
        "{w} is allergic to {o}.",
        "Does {o} give {w} a bad reaction?",
        "{w}对{o}过敏。",
        "{w}碰到{o}身体会不舒服吗？",
    ),
}

# Tails that make a note mixed-script (never asked about).
EN_TAILS = ("(noted during the weekly sync)", "(from the family chat)", "(mentioned over dinner)")
ZH_TAILS = ("（周会上提到的）", "（家庭群里说的）", "（吃饭时聊到）")

# English function words and Chinese function characters: shared ones do not count as content.
EN_FUNCTION = frozenset(
    [
        "i",
        "me",
        "my",
        "mine",
        "we",
        "our",
        "us",
        "you",
        "your",
        "he",
        "him",
        "his",
        "she",
        "her",
        "they",
        "them",
        "their",
        "it",
        "its",
        "the",
        "a",
        "an",
        "of",
        "on",
        "in",
        "at",
        "to",
        "for",
        "from",
        "with",
        "by",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "what",
        "where",
        "who",
        "which",
        "when",
        "whom",
        "how",
        "why",
    ]
)
ZH_FUNCTION = frozenset("我的了吗是在有没把向对会很一什么哪里上下个着过还已")
