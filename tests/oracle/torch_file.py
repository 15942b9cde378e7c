"""State dicts saved by Python's torch.save in the legacy and zip formats, for the C++ reader."""
import collections
import os

import torch

from common import out_dir

d = out_dir()
g = torch.Generator().manual_seed(5)
tensors = {
    "w": torch.randn(3, 4, 5, generator=g),
    "b": torch.randn(7, generator=g).double(),
    "n": torch.tensor(12345678901, dtype=torch.long),  # 0-d, like num_batches_tracked
    "i": torch.randint(-100, 100, (4, 2), generator=g, dtype=torch.int32),
    "h": torch.randn(6, generator=g).half(),
    "u": torch.randint(0, 255, (9,), generator=g, dtype=torch.uint8),
    "e": torch.zeros(0, 3),
}
base = torch.randn(4, 6, generator=g)
tensors["t"] = base.t()                # non-contiguous view of its storage
tensors["s"] = base[1:3, 2:5]          # storage offset
tensors["base"] = base                 # shares the storage
for fmt in ("legacy", "zip"):
    zipped = fmt == "zip"
    torch.save(dict(tensors), os.path.join(d, f"{fmt}_dict.pt"), _use_new_zipfile_serialization=zipped)
    torch.save(collections.OrderedDict(tensors), os.path.join(d, f"{fmt}_odict.pt"),
               _use_new_zipfile_serialization=zipped)
    # a module's state_dict: an OrderedDict with a _metadata attribute (BUILD opcode)
    m = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.BatchNorm2d(3))
    torch.save(m.state_dict(), os.path.join(d, f"{fmt}_module.pt"), _use_new_zipfile_serialization=zipped)
    torch.save({k: v.clone() for k, v in m.state_dict().items()}, os.path.join(d, f"{fmt}_module_expected.pt"))
    # values that are not tensors: must be rejected
    torch.save({"a": 1}, os.path.join(d, f"{fmt}_notensor.pt"), _use_new_zipfile_serialization=zipped)
# expected values, contiguous, in the format the test support reads (zip plain dict)
torch.save({k: v.contiguous().clone() for k, v in tensors.items()}, os.path.join(d, "expected.pt"))
