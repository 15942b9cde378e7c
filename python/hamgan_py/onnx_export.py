"""ONNX export of a loaded generator via torch.onnx.export: opset 17 under torch 1.x (its
TorchScript exporter), 18 under torch 2.x, whose exporter writes opset-18 operators (Split's
num_outputs among them) and, asked for 17, leaves them in a graph that onnxruntime refuses."""
import torch

OPSET = 17 if int(torch.__version__.split(".")[0]) < 2 else 18


class _Fixed(torch.nn.Module):
    """forward with the Hamburger's bases as an explicit input (ONNX graphs take no generator)."""

    def __init__(self, g):
        super().__init__()
        self.g = g

    def forward(self, z, y, bases):
        return self.g(z, y, bases)


def onnx_inputs(g, batch=2):
    """Example inputs (z, y[, bases]) and their names for a generator `g`."""
    z = torch.randn(batch, g.z_dim)
    y = torch.arange(batch, dtype=torch.long) % g.n_classes
    ham = g.random_hamburger()
    if ham is None:
        return (z, y), ["z", "y"]
    return (z, y, ham.draw_bases(batch)), ["z", "y", "bases"]


def export_onnx(g, path, opset=OPSET, batch=2):
    """Writes g to `path` with inputs z (B x z_dim), y (B, int64) and, for a random-init Hamburger,
    bases ((B * groups) x d x r, e.g. hamgan_py.sample_bases); output "images". Batch is dynamic.
    ham_cd does not export: its ridge solve (torch.linalg.cholesky, solve_triangular) has no ONNX
    operator, and torch.onnx raises."""
    args, names = onnx_inputs(g, batch)
    module = _Fixed(g) if len(args) == 3 else g
    axes = {n: {0: "batch"} for n in names}
    axes["images"] = {0: "batch"}
    with torch.no_grad():
        torch.onnx.export(module.eval(), args, path, input_names=names, output_names=["images"],
                          dynamic_axes=axes, opset_version=opset, do_constant_folding=True)
    return path
