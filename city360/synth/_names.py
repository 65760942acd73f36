"""Plausible invented shop names, seeded, in the script the extract's own names use."""

from __future__ import annotations

import numpy as np

__all__ = ["SHOP_KINDS", "invent_name"]

SHOP_KINDS: tuple[str, ...] = (
    "shop=convenience",
    "amenity=cafe",
    "shop=bakery",
    "amenity=restaurant",
    "amenity=pharmacy",
    "shop=books",
    "shop=florist",
    "shop=hairdresser",
    "shop=clothes",
    "shop=hardware",
    "amenity=bar",
    "shop=bicycle",
)
"""Kinds given to invented POIs, in OSM ``key=value`` form."""

_LATIN_WORDS: dict[str, tuple[str, ...]] = {
    "shop=convenience": ("Mart", "Market", "Corner Shop", "Minimarket", "Store"),
    "amenity=cafe": ("Cafe", "Coffee", "Espresso Bar", "Tea Room", "Roasters"),
    "shop=bakery": ("Bakery", "Bread", "Patisserie", "Bakehouse"),
    "amenity=restaurant": ("Kitchen", "Bistro", "Grill", "Diner", "Noodles", "Pizzeria"),
    "amenity=pharmacy": ("Pharmacy", "Apteekki", "Chemist"),
    "shop=books": ("Books", "Bookshop", "Reading Room"),
    "shop=florist": ("Flowers", "Florist", "Garden"),
    "shop=hairdresser": ("Hair", "Barber", "Salon"),
    "shop=clothes": ("Fashion", "Clothing", "Outfitters", "Boutique"),
    "shop=hardware": ("Hardware", "Tools", "Supply"),
    "amenity=bar": ("Bar", "Pub", "Tavern"),
    "shop=bicycle": ("Cycles", "Bikes", "Bike Shop"),
}
_LATIN_FIRST = (
    "Aurora", "Birch", "Harbor", "Maple", "Nordic", "Pine", "Sunrise", "Lake", "Meadow",
    "Copper", "Silver", "Blue Door", "Green Leaf", "Old Town", "North Star", "Juniper",
    "Linden", "Rowan", "Cedar", "Corner", "Bright", "Riverside", "Kallio", "Karhu", "Lumi",
    "Tuuli", "Otava", "Marja", "Sampo", "Kivi", "Polar", "Amber", "Baltic", "Crown",
)  # fmt: skip
_JA_WORDS: dict[str, tuple[str, ...]] = {
    "shop=convenience": ("マート", "ストア", "商店"),
    "amenity=cafe": ("珈琲店", "カフェ", "喫茶"),
    "shop=bakery": ("ベーカリー", "パン工房", "製パン"),
    "amenity=restaurant": ("食堂", "ラーメン", "寿司", "そば", "定食"),
    "amenity=pharmacy": ("薬局", "ドラッグ"),
    "shop=books": ("書店", "書房", "ブックス"),
    "shop=florist": ("生花店", "フラワー"),
    "shop=hairdresser": ("理容室", "美容室", "ヘアサロン"),
    "shop=clothes": ("洋品店", "衣料品店"),
    "shop=hardware": ("金物店", "工具店"),
    "amenity=bar": ("酒場", "居酒屋"),
    "shop=bicycle": ("自転車店", "サイクル"),
}
_JA_FIRST = (
    "さくら", "みどり", "ひまわり", "山田", "田中", "中村", "小林", "大和", "富士", "若葉",
    "青空", "光", "松本", "練馬", "石神井", "ふじみ", "あおば", "むさし", "朝日", "かえで",
)  # fmt: skip


def invent_name(kind: str, rng: np.random.Generator, *, japanese: bool, taken: set[str]) -> str:
    """A name like "Birch Bakery" or "さくら薬局" for a POI of ``kind`` not in ``taken``.

    Draws from ``rng`` only, so the same generator state gives the same name. Adds the name to
    ``taken``; when the word lists run dry a number keeps names unique ("Birch Bakery 2").
    """
    words = (_JA_WORDS if japanese else _LATIN_WORDS).get(kind) or (
        ("商店",) if japanese else ("Shop",)
    )
    firsts = _JA_FIRST if japanese else _LATIN_FIRST
    for _ in range(20):
        first = firsts[int(rng.integers(len(firsts)))]
        word = words[int(rng.integers(len(words)))]
        name = f"{first}{word}" if japanese else f"{first} {word}"
        if name not in taken:
            taken.add(name)
            return name
    number = 2
    while f"{name} {number}" in taken:
        number += 1
    name = f"{name} {number}"
    taken.add(name)
    return name
