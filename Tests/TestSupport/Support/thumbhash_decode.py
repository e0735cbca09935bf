"""Decodes ThumbHashes with thumbhash-python, an implementation of the format independent of ours.

Usage: thumbhash_decode.py BASE64...  Prints one line per hash: width height meanR meanG meanB.
"""
import sys

import thumbhash
from PIL import ImageStat

for text in sys.argv[1:]:
    image = thumbhash.thumbhash_to_image(text).convert("RGB")
    mean = ImageStat.Stat(image).mean
    print(image.width, image.height, *(f"{m:.3f}" for m in mean))
