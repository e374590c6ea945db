"""English-Chinese sentence pairs made from templates, with their word alignment (for train.py).

Every pair is built from linked parts: each part of the English and of the Chinese side names the
English parts it translates (its keys), so the gold alignment of any token is known and the
cross-attention can be scored against it. The templates are chosen so that word order differs:
a place phrase moves before the verb, a preposition after its noun (`under the table` ->
`桌子下面`), dates turn round (`March 5, 2024` -> `2024年3月5日`), a count takes the measure word
its noun needs (`three books` -> `三本书`, `two cats` -> `两只猫`), number words become Chinese
numerals (`three hundred and five` -> `三百零五`).

The held-out test set is made of combinations training never sees (a verb, noun and adjective, a
thing with a landmark, an activity with a place, a month with a year, a number, ...): `split`
draws a tenth of all combinations from a seeded generator; each word is still seen elsewhere.
"""

import random

# (English, Chinese, takes the third person singular)
PEOPLE = [
    ([("I", "我")], False), ([("you", "你")], False), ([("he", "他")], True), ([("she", "她")], True),
    ([("we", "我们")], False), ([("they", "他们")], False),
    ([("my", "我"), ("brother", "哥哥")], True), ([("my", "我"), ("sister", "姐姐")], True),
    ([("my", "我"), ("mother", "妈妈")], True), ([("my", "我"), ("father", "爸爸")], True),
    ([("my", "我的"), ("friend", "朋友")], True), ([("the teacher", "老师")], True),
    ([("the doctor", "医生")], True), ([("Tom", "汤姆")], True), ([("Lily", "莉莉")], True),
]
# (singular, plural, Chinese, measure word, takes a colour or size)
THINGS = [
    ("apple", "apples", "苹果", "个", True), ("orange", "oranges", "橘子", "个", True),
    ("egg", "eggs", "鸡蛋", "个", True), ("book", "books", "书", "本", True),
    ("car", "cars", "车", "辆", True), ("bicycle", "bicycles", "自行车", "辆", True),
    ("cat", "cats", "猫", "只", True), ("dog", "dogs", "狗", "只", True), ("bird", "birds", "鸟", "只", True),
    ("pen", "pens", "笔", "支", True), ("chair", "chairs", "椅子", "把", True),
    ("umbrella", "umbrellas", "伞", "把", True), ("key", "keys", "钥匙", "把", True),
    ("table", "tables", "桌子", "张", True), ("ticket", "tickets", "票", "张", False),
    ("map", "maps", "地图", "张", True), ("letter", "letters", "信", "封", False),
    ("flower", "flowers", "花", "朵", True), ("fish", "fish", "鱼", "条", True),
    ("horse", "horses", "马", "匹", True), ("cup of tea", "cups of tea", "茶", "杯", False),
    ("bottle of water", "bottles of water", "水", "瓶", False),
]
ADJECTIVES = [("red", "红"), ("blue", "蓝"), ("green", "绿"), ("black", "黑"), ("white", "白"),
              ("yellow", "黄"), ("big", "大"), ("small", "小"), ("new", "新"), ("old", "旧")]
# (base, third person, past, Chinese)
HAVE_VERBS = [("have", "has", None, "有"), ("buy", "buys", "bought", "买"), ("see", "sees", "saw", "看见"),
              ("want", "wants", None, "要"), ("need", "needs", None, "需要")]
# A preposition of place and the word that follows the noun in Chinese.
PREPOSITIONS = [("under", "下面"), ("on", "上面"), ("in", "里面"), ("behind", "后面"),
                ("in front of", "前面"), ("next to", "旁边")]
LANDMARKS = [("table", "桌子"), ("chair", "椅子"), ("car", "车"), ("box", "箱子"), ("bed", "床"),
             ("door", "门"), ("tree", "树"), ("house", "房子")]
# (third person, base, its parts: (English, Chinese) in English order, the Chinese order)
ACTIVITIES = [
    ("reads", "read", [("a book", "书")], "看"), ("drinks", "drink", [("tea", "茶")], "喝"),
    ("eats", "eat", [("an apple", "苹果")], "吃"), ("writes", "write", [("a letter", "信")], "写"),
    ("plays", "play", [("football", "足球")], "踢"), ("watches", "watch", [("TV", "电视")], "看"),
    ("cooks", "cook", [("dinner", "饭")], "做"), ("does", "do", [("homework", "作业")], "做"),
    ("listens to", "listen to", [("music", "音乐")], "听"), ("sings", "sing", [("songs", "歌")], "唱"),
    ("studies", "study", [("Chinese", "中文")], "学习"), ("works", "work", [], "工作"),
    ("sleeps", "sleep", [], "睡觉"), ("swims", "swim", [], "游泳"),
]
PLACES = [("in", "the library", "图书馆"), ("at", "school", "学校"), ("in", "the park", "公园"),
          ("at", "home", "家"), ("in", "the kitchen", "厨房"), ("at", "the station", "车站"),
          ("in", "the garden", "花园"), ("at", "the hospital", "医院"), ("in", "the office", "办公室"),
          ("in", "the restaurant", "饭馆"), ("in", "the classroom", "教室"), ("at", "the beach", "海边")]
WEEKDAYS = [("Monday", "星期一"), ("Tuesday", "星期二"), ("Wednesday", "星期三"), ("Thursday", "星期四"),
            ("Friday", "星期五"), ("Saturday", "星期六"), ("Sunday", "星期日")]
TIMES = [("every day", "每天"), ("today", "今天"), ("in the morning", "早上"), ("in the evening", "晚上"),
         ("on weekends", "周末")] + [("on " + en, zh) for en, zh in WEEKDAYS]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

ONES = ["", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
DIGITS = "零一二三四五六七八九"
VOWELS = "aeiou"


class Pair:
    """A sentence pair as linked parts: English parts (text, key), Chinese parts (text, keys).

    An English part's text carries the space before it; Chinese parts are written together."""

    def __init__(self):
        self.english, self.chinese = [], []
        self.capitalize = True  # a sentence; a date or number phrase is written as it is

    def en(self, text, space=True):
        key = len(self.english)
        self.english.append(((" " if space and self.english else "") + text, key))
        return key

    def zh(self, text, *keys):
        self.chinese.append((text, frozenset(keys)))

    def source(self):
        text = "".join(text for text, _ in self.english)
        return text[0].upper() + text[1:] if self.capitalize else text

    def target(self):
        return "".join(text for text, _ in self.chinese)


def number_parts(pair, n, count=False):
    """Adds n (1-999) in words to the English side; returns the Chinese parts [(text, key)]."""
    parts = []
    hundreds, rest = divmod(n, 100)
    if hundreds:
        parts.append((DIGITS[hundreds] + "百", pair.en(ONES[hundreds] + " hundred")))
        if rest:
            link = pair.en("and")
            if rest < 10:
                parts.append(("零", link))
    if rest >= 20:
        tens, ones = divmod(rest, 10)
        key = pair.en(TENS[tens])
        parts.append((DIGITS[tens] + "十", key))
        if ones:
            parts.append((DIGITS[ones], pair.en("-" + ONES[ones], space=False)))
    elif rest >= 10:
        parts.append((("一" if hundreds else "") + "十" + (DIGITS[rest - 10] if rest > 10 else ""),
                      pair.en(ONES[rest])))
    elif rest:
        # Two of something is 两, the numeral alone 二.
        parts.append(("两" if count and n == 2 else DIGITS[rest], pair.en(ONES[rest])))
    return parts


def subject(pair, person):
    keys = [pair.en(en) for en, _ in person[0]]
    for (_, zh), key in zip(person[0], keys):
        pair.zh(zh, key)
    return keys


def verb_for(person, base, third):
    return third if person[1] else base


def counted(pair, rng, thing, adjective):
    """`three red apples` -> `三个红苹果` (the measure word linked to the number and the noun)."""
    draw = rng.random()
    n = 1 if draw < 0.2 else rng.randint(2, 10) if draw < 0.8 else rng.randint(11, 99)
    if n == 1:
        first = adjective[0] if adjective else thing[0]
        numeral = [("一", pair.en("an" if first[0] in VOWELS else "a"))]
    else:
        numeral = number_parts(pair, n, count=True)
    adjective_key = pair.en(adjective[0]) if adjective else None
    noun_key = pair.en(thing[0] if n == 1 else thing[1])
    for text, key in numeral:
        pair.zh(text, key)
    pair.zh(thing[3], numeral[-1][1], noun_key)
    if adjective:
        pair.zh(adjective[1], adjective_key)
    pair.zh(thing[2], noun_key)


def possession(rng):
    """`My brother has three red apples.` -> `我哥哥有三个红苹果。`"""
    pair, person, verb = Pair(), rng.choice(PEOPLE), rng.choice(HAVE_VERBS)
    thing = rng.choice(THINGS)
    adjective = rng.choice(ADJECTIVES) if thing[4] and rng.random() < 0.6 else None
    subject(pair, person)
    past = verb[2] and rng.random() < 0.3
    verb_key = pair.en(verb[2] if past else verb_for(person, verb[0], verb[1]))
    pair.zh(verb[3], verb_key)
    if past:
        pair.zh("了", verb_key)
    counted(pair, rng, thing, adjective)
    pair.zh("。", pair.en(".", space=False))
    # With the verb in it, a thing held out with one verb is still seen with the others (`letter`
    # takes no adjective: without the verb, `a letter` would never be seen at all).
    return pair, ("possession", thing[0], adjective[0] if adjective else None, verb[0])


def location(rng):
    """`The cat is under the table.` -> `猫在桌子下面。`;
    `There are two dogs behind the car.` -> `车后面有两只狗。`"""
    pair = Pair()
    thing = rng.choice([t for t in THINGS if t[4]])
    preposition, landmark = rng.choice(PREPOSITIONS), rng.choice(LANDMARKS)
    if rng.random() < 0.5:
        plural = rng.random() < 0.3
        noun_key = pair.en("the " + (thing[1] if plural else thing[0]))
        verb_key = pair.en("are" if plural else "is")
        preposition_key, landmark_key = pair.en(preposition[0]), pair.en("the " + landmark[0])
        pair.zh(thing[2], noun_key)
        pair.zh("在", verb_key)
        pair.zh(landmark[1], landmark_key)
        pair.zh(preposition[1], preposition_key)
    else:
        there = pair.en("there")
        n = rng.choice([1, 1, 2, 3, 4, 5])
        verb_key = pair.en("is" if n == 1 else "are")
        if n == 1:
            numeral = [("一", pair.en("an" if thing[0][0] in VOWELS else "a"))]
        else:
            numeral = number_parts(pair, n, count=True)
        noun_key = pair.en(thing[0] if n == 1 else thing[1])
        preposition_key, landmark_key = pair.en(preposition[0]), pair.en("the " + landmark[0])
        pair.zh(landmark[1], landmark_key)
        pair.zh(preposition[1], preposition_key)
        pair.zh("有", there, verb_key)
        for text, key in numeral:
            pair.zh(text, key)
        pair.zh(thing[3], numeral[-1][1], noun_key)
        pair.zh(thing[2], noun_key)
    pair.zh("。", pair.en(".", space=False))
    return pair, ("location", thing[0], landmark[0])


def activity(rng):
    """`My brother reads a book in the library.` -> `我哥哥在图书馆看书。` (time and place move forward)"""
    pair, person = Pair(), rng.choice(PEOPLE)
    third, base, objects, verb = rng.choice(ACTIVITIES)
    preposition, place, place_zh = rng.choice(PLACES)
    time = rng.choice(TIMES) if rng.random() < 0.4 else None
    subject(pair, person)
    verb_key = pair.en(verb_for(person, base, third))
    object_keys = [pair.en(en) for en, _ in objects]
    at_key, place_key = pair.en(preposition), pair.en(place)
    if time:
        pair.zh(time[1], pair.en(time[0]))
    pair.zh("在", at_key)
    pair.zh(place_zh, place_key)
    pair.zh(verb, verb_key)
    for (_, zh), key in zip(objects, object_keys):
        pair.zh(zh, key)
    pair.zh("。", pair.en(".", space=False))
    return pair, ("activity", base, place)


def question(rng):
    """`Where is the station?` -> `车站在哪里？`, `How many cats does Tom have?` -> `汤姆有几只猫？` ..."""
    pair, kind = Pair(), rng.randrange(4)
    if kind == 0:
        where, is_key = pair.en("where"), pair.en("is")
        things = [("the " + p, z) for _, p, z in PLACES if p.startswith("the")] + \
                 [("the " + t[0], t[2]) for t in THINGS if t[4]]
        name, zh = rng.choice(things)
        pair.zh(zh, pair.en(name))
        pair.zh("在", is_key)
        pair.zh("哪里", where)
        combination = name
    elif kind == 1:
        thing, person = rng.choice(THINGS), rng.choice(PEOPLE)
        how = pair.en("how many")
        noun_key = pair.en(thing[1])
        pair.en("does" if person[1] else "do")  # nothing in Chinese
        subject(pair, person)
        have_key = pair.en("have")
        pair.zh("有", have_key)
        pair.zh("几", how)
        pair.zh(thing[3], how, noun_key)
        pair.zh(thing[2], noun_key)
        combination = (thing[0], person[0][-1][0])
    elif kind == 2:
        thing, person = rng.choice(THINGS), rng.choice(PEOPLE)
        do_key = pair.en("does" if person[1] else "do")
        subject(pair, person)
        like_key = pair.en("like")
        pair.zh("喜欢", like_key)
        pair.zh(thing[2], pair.en(thing[1]))
        pair.zh("吗", do_key)
        combination = (thing[0], person[0][-1][0])
    else:
        who, is_key = pair.en("who"), pair.en("is")
        preposition, place, zh = rng.choice(PLACES)
        pair.zh("谁", who)
        pair.zh("在", is_key, pair.en(preposition))
        pair.zh(zh, pair.en(place))
        combination = place
    pair.zh("？", pair.en("?", space=False))
    return pair, ("question", kind, combination)


def date(rng):
    """`on March 5, 2024` -> `2024年3月5日`; `Today is Friday, May 1.` -> `今天是5月1日星期五。` ..."""
    pair, kind = Pair(), rng.randrange(3)
    month = rng.randrange(12)
    day = rng.randint(1, DAYS_IN_MONTH[month])
    year = rng.randint(1950, 2030)
    if kind == 0:
        pair.capitalize = False
        pair.en("on")
        month_key, day_key = pair.en(MONTHS[month]), pair.en(str(day))
        pair.en(",", space=False)
        year_key = pair.en(str(year))
        pair.zh("%d年" % year, year_key)
        pair.zh("%d月" % (month + 1), month_key)
        pair.zh("%d日" % day, day_key)
        combination = (month, year)
    elif kind == 1:
        person = rng.choice(PEOPLE)
        subject(pair, person)
        plural = person[0][0][0] in ("you", "we", "they")
        born = pair.en(("were" if plural else "was") + " born")
        on = pair.en("on")
        month_key, day_key = pair.en(MONTHS[month]), pair.en(str(day))
        pair.en(",", space=False)
        year_key = pair.en(str(year))
        pair.zh("出生于", born, on)
        pair.zh("%d年" % year, year_key)
        pair.zh("%d月" % (month + 1), month_key)
        pair.zh("%d日" % day, day_key)
        pair.zh("。", pair.en(".", space=False))
        combination = (month, year)
    else:
        weekday = rng.choice(WEEKDAYS)
        today, is_key = pair.en("today"), pair.en("is")
        weekday_key = pair.en(weekday[0])
        pair.en(",", space=False)
        month_key, day_key = pair.en(MONTHS[month]), pair.en(str(day))
        pair.zh("今天", today)
        pair.zh("是", is_key)
        pair.zh("%d月" % (month + 1), month_key)
        pair.zh("%d日" % day, day_key)
        pair.zh(weekday[1], weekday_key)
        pair.zh("。", pair.en(".", space=False))
        combination = (weekday[0], month)
    return pair, ("date", kind, combination)


def number(rng):
    """`three hundred and five` -> `三百零五`, `twenty-three` -> `二十三`."""
    pair = Pair()
    pair.capitalize = False
    n = rng.randint(1, 999) if rng.random() < 0.7 else rng.randint(1, 99)
    for text, key in number_parts(pair, n):
        pair.zh(text, key)
    return pair, ("number", n)


TEMPLATES = [(possession, 0.22), (location, 0.16), (activity, 0.24), (question, 0.12), (date, 0.14),
             (number, 0.12)]


def generate(seed, count):
    """`count` distinct pairs as (pair, combination), drawn with a seeded generator."""
    rng = random.Random(seed)
    seen, pairs = set(), []
    functions, weights = zip(*TEMPLATES)
    while len(pairs) < count:
        pair, combination = rng.choices(functions, weights)[0](rng)
        if pair.source() not in seen:
            seen.add(pair.source())
            pairs.append((pair, combination))
    return pairs


def split(pairs, seed, fraction=0.1):
    """(training pairs, test pairs): the test pairs are those whose combination was held out."""
    combinations = sorted({repr(c) for _, c in pairs})
    held = set(random.Random(seed).sample(combinations, int(len(combinations) * fraction)))
    train = [p for p in pairs if repr(p[1]) not in held]
    test = [p for p in pairs if repr(p[1]) in held]
    return train, test
