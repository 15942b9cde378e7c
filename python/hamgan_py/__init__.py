"""hamgan's generator in plain PyTorch, from the files `hamgan export` writes.

    import hamgan_py
    g = hamgan_py.load_generator("export_dir")       # torch.nn.Module, eval mode
    x = g(z, y)                                      # B x C x R x R in [-1, 1]
    x = g.sample(seed=0, classes=[3, 3], ks=[0, 1])  # exactly `hamgan sample --seed 0`'s images
    hamgan_py.export_onnx(g, "g.onnx")

load_generator raises ExportError (a ValueError naming the file) for a pair the exporter did not
write together: config.json edited by hand, or another export's model.safetensors next to it.
"""
from .export_files import ExportError
from .generator import Generator, load_generator
from .sampling import latent, sample_bases, splitmix64, to_uint8
from .onnx_export import export_onnx, onnx_inputs

__all__ = ["ExportError", "Generator", "load_generator", "latent", "sample_bases", "splitmix64", "to_uint8",
           "export_onnx", "onnx_inputs"]
