"""A real-photo ImageFolder for 128 px checks: 10 synset-named classes x N JPEG random crops of Debian wallpapers
(ukui-wallpapers + plasma-workspace-wallpapers) at ImageNet-like sizes; each class draws from its
own disjoint subset of source wallpapers. Seeded: same folder every run."""
import glob, os, random, sys
from PIL import Image
Image.MAX_IMAGE_PIXELS = None
out = sys.argv[1]; per_class = int(sys.argv[2]) if len(sys.argv) > 2 else 24
srcs = sorted(glob.glob('/usr/share/backgrounds/*.jpg') + glob.glob('/usr/share/backgrounds/*.png'))
for d in sorted(glob.glob('/usr/share/wallpapers/*/contents/images')):
    fs = [f for f in glob.glob(d + '/*') if f.lower().endswith(('.jpg', '.jpeg', '.png'))]
    def key(f):
        w, h = map(int, os.path.splitext(os.path.basename(f))[0].split('x'))
        return (w >= h, w * h if w * h <= 2560 * 1600 else -w * h)  # landscape, ~2560x1600 (cheap to decode)
    srcs.append(max(fs, key=key))
rng = random.Random(35)
rng.shuffle(srcs)
n_cls = 10; k = len(srcs) // n_cls
print(f'{len(srcs)} source wallpapers, {k} per class')
sizes = [(500, 375), (375, 500), (500, 333), (333, 500), (500, 400), (400, 500), (500, 500)]
for c in range(n_cls):
    cdir = os.path.join(out, f'n{c + 1:08d}'); os.makedirs(cdir, exist_ok=True)
    imgs = [Image.open(f).convert('RGB') for f in srcs[c * k:(c + 1) * k]]
    imgs = [im.resize((im.width // 2, im.height // 2), Image.BILINEAR) if im.width > 3000 else im for im in imgs]
    for i in range(per_class):
        im = imgs[i % k]; W, H = sizes[rng.randrange(len(sizes))]
        s = rng.uniform(0.25, 1.0) * min(im.width / W, im.height / H)
        cw, ch = max(16, int(W * s)), max(16, int(H * s))
        x, y = rng.randrange(im.width - cw + 1), rng.randrange(im.height - ch + 1)
        crop = im.crop((x, y, x + cw, y + ch)).resize((W, H), Image.BICUBIC)
        if rng.random() < 0.5: crop = crop.transpose(Image.FLIP_LEFT_RIGHT)
        crop.save(os.path.join(cdir, f'n{c + 1:08d}_{i:04d}.JPEG'), quality=90)
    print(f'class {c + 1}:', [os.path.basename(os.path.dirname(os.path.dirname(os.path.dirname(f)))) if '/wallpapers/' in f else os.path.basename(f) for f in srcs[c * k:(c + 1) * k]])
