"""Oracle for test_data_inputs: a CMYK JPEG written by PIL (Adobe marker, inverted inks, as
Photoshop and ImageNet's CMYK files have) and PIL's own RGB of it (Image.convert("RGB")), which
hamgan's libjpeg path must reproduce."""
import numpy as np
import torch
from PIL import Image

from common import out_dir, save


def main():
    d = out_dir()
    h, w = 16, 24
    y, x = np.mgrid[0:h, 0:w]
    inks = np.stack([(x * 10) % 256, (y * 15) % 256, ((x + y) * 7) % 256, (x * y * 3) % 256], -1)
    Image.fromarray(inks.astype(np.uint8), mode="CMYK").save(f"{d}/cmyk.jpg", quality=95)
    im = Image.open(f"{d}/cmyk.jpg")
    assert im.mode == "CMYK" and im.info.get("adobe"), (im.mode, im.info)
    # Two entries: a one-entry dict pickles with SETITEM, which LibTorch 1.13's unpickler lacks.
    save(d, "cmyk.pt", {"rgb": torch.from_numpy(np.asarray(im.convert("RGB")).copy()),
                        "inks": torch.from_numpy(inks.astype(np.uint8))})


if __name__ == "__main__":
    main()
