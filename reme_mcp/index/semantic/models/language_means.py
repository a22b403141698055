"""Language centering: multilingual-e5 puts text of one language near other text of that language.

Asked in Chinese, the model prefers any Chinese note to the English note that answers
(bench/paraphrase.py: cross-language recall@5 0.21 uncentered). Subtracting most of each
language's mean vector from every vector removes much of that pull (0.65-0.80 at 0.7 to
0.85 of the mean; docs/semantic.md). The means are the model's, not a workspace's: they
come from the everyday sentences below, embedded once per model load, so a workspace
written in one language is centred exactly like a mixed one. A text of mixed script gets
the mix of the two means by its share of CJK letters.
"""

from __future__ import annotations

# How much of the language mean is removed (1.0 removes all of it; chosen on two seeds).
STRENGTH = 0.8

# Everyday sentences, one meaning per pair, none from a benchmark.
ENGLISH = (
    "The deployment script failed because the disk was full.",
    "We agreed to meet again next Thursday to review the budget.",
    "She prefers tea over coffee in the morning.",
    "The train to the airport leaves every twenty minutes.",
    "Remember to renew the passport before the summer trip.",
    "The new release fixes a crash when the file is empty.",
    "He has been learning to play chess with his kids.",
    "Our office moved to the third floor last month.",
    "The recipe needs two eggs, flour and a pinch of salt.",
    "They decided to postpone the launch until the tests pass.",
    "The weather was cold and rainy for the whole weekend.",
    "I started running three times a week to get fit.",
    "The invoice was paid late because the bank was closed.",
    "Please back up the database before upgrading the server.",
    "The museum is closed on Mondays and public holidays.",
    "My favourite book this year was a novel about the sea.",
    "The kids want to go camping by the lake in August.",
    "The meeting notes are stored in the shared folder.",
    "The password policy requires a change every ninety days.",
    "We planted tomatoes and basil in the garden.",
    "The flight was delayed by two hours due to fog.",
    "The team chose a simpler design to save time.",
    "He called the plumber because the kitchen sink leaked.",
    "The conference talk was about privacy in mobile apps.",
)
CHINESE = (
    "部署脚本失败了，因为磁盘满了。",
    "我们约好下周四再开会讨论预算。",
    "她早上更喜欢喝茶而不是咖啡。",
    "去机场的火车每二十分钟一班。",
    "暑假旅行之前记得续签护照。",
    "新版本修复了空文件导致的崩溃。",
    "他一直在跟孩子们学下国际象棋。",
    "我们办公室上个月搬到了三楼。",
    "这个菜谱需要两个鸡蛋、面粉和一点盐。",
    "他们决定等测试通过后再发布。",
    "整个周末天气又冷又下雨。",
    "为了锻炼身体，我开始每周跑步三次。",
    "因为银行关门，发票付晚了。",
    "升级服务器之前请先备份数据库。",
    "博物馆周一和法定节假日闭馆。",
    "我今年最喜欢的书是一本关于大海的小说。",
    "孩子们想八月份去湖边露营。",
    "会议记录保存在共享文件夹里。",
    "密码策略要求每九十天更换一次。",
    "我们在花园里种了西红柿和罗勒。",
    "航班因为大雾延误了两个小时。",
    "团队选择了更简单的设计来节省时间。",
    "厨房水槽漏水，他叫了水管工。",
    "会议演讲的主题是移动应用中的隐私。",
)


def cjk_share(text: str) -> float:
    """The share of CJK characters among the letters and digits of `text`."""
    letters = [ch for ch in text if ch.isalnum()]
    if not letters:
        return 0.0
    return sum(1 for ch in letters if "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff") / len(letters)
