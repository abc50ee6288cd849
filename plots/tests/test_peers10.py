"""CPU test of step 10's PyTorch peer (steps/10_multi_gpu/peers_pytorch.py) without PyTorch:
the short program's pack and unpack, run on numpy arrays that stand in for tensors (view,
transpose, contiguous, permute, reshape, new_empty, copy_ with the same meaning), with the
all-to-all done by slicing, give every GPU its block of the transpose, for even and uneven
splits. Skipped without numpy."""

import importlib.util
import unittest
from pathlib import Path

try:
    import numpy as np
except ImportError:
    np = None

ROOT = Path(__file__).resolve().parents[2]


def load_peers():
    spec = importlib.util.spec_from_file_location(
        "peers10", ROOT / "steps" / "10_multi_gpu" / "peers_pytorch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # imports no torch at the top
    return module


class Tensor:
    """The few tensor methods the pack and unpack use, on a numpy array."""

    def __init__(self, a):
        self.a = a

    def view(self, *shape):  # as torch: never a copy
        b = self.a.reshape(shape)
        if b.size and not np.shares_memory(b, self.a):
            raise ValueError("view %s of %s would copy" % (shape, self.a.shape))
        return Tensor(b)

    def transpose(self, d0, d1):
        return Tensor(np.swapaxes(self.a, d0, d1))

    def permute(self, *dims):
        return Tensor(self.a.transpose(dims))

    def contiguous(self):
        return Tensor(np.ascontiguousarray(self.a))

    def reshape(self, *shape):
        return Tensor(self.a.reshape(shape))

    def new_empty(self, *shape):
        return Tensor(np.full(shape, -1, dtype=self.a.dtype))

    def __getitem__(self, key):
        return Tensor(self.a[key])

    def copy_(self, other):
        self.a[...] = other.a
        return self


@unittest.skipIf(np is None, "numpy is not installed")
class ShortProgram(unittest.TestCase):
    def check(self, R, C, G):
        peers = load_peers()
        rfirst, rcount = peers.blocks(R, G)
        cfirst, ccount = peers.blocks(C, G)
        A = np.arange(R * C, dtype=np.int64).reshape(R, C)
        progs = [peers.short_program(R, C, G, r) for r in range(G)]
        sends = []
        for r, (pack, _, _, send_sizes) in enumerate(progs):
            x = Tensor(np.ascontiguousarray(A[rfirst[r]:rfirst[r] + rcount[r]]))
            send = pack(x).a
            self.assertTrue(send.flags.c_contiguous)
            flat = send.reshape(-1)
            sizes = send_sizes or [flat.size // G] * G
            self.assertEqual(sizes, [rcount[r] * c for c in ccount])
            cut = np.cumsum([0] + sizes)
            sends.append([flat[cut[p]:cut[p + 1]] for p in range(G)])
        for me, (_, unpack, recv_sizes, _) in enumerate(progs):
            if recv_sizes is not None:
                self.assertEqual(recv_sizes, [r * ccount[me] for r in rcount])
            recv = np.concatenate([sends[q][me] for q in range(G)])  # the all-to-all
            y = unpack(Tensor(recv)).a
            self.assertTrue(y.flags.c_contiguous)
            self.assertEqual(y.shape, (ccount[me], R))
            np.testing.assert_array_equal(y, A.T[cfirst[me]:cfirst[me] + ccount[me]],
                                          "%dx%d, G = %d, GPU %d" % (R, C, G, me))

    def test_shapes(self):
        for G in (1, 2, 3, 4):
            for R, C in ((7, 5), (8, 8), (1, 9), (9, 1), (12, 12), (12, 8), (6, 10), (13, 4),
                         (4, 13), (2, 3), (16, 6)):
                with self.subTest(R=R, C=C, G=G):
                    self.check(R, C, G)

    def test_even_is_the_one_copy_form(self):
        peers = load_peers()
        self.assertIsNone(peers.short_program(8, 12, 4, 1)[2])
        self.assertIsNotNone(peers.short_program(8, 10, 4, 1)[2])

    def test_even_unpack_reshape_is_a_view(self):
        # Without its .contiguous(), the even unpack would hand back a strided view of recv
        # (recv.view(R, bc).t()): no transpose made, nothing row-major.
        G, br, bc = 4, 3, 5
        recv = np.arange(G * br * bc)
        y = recv.reshape(G, br, bc).transpose(2, 0, 1).reshape(bc, G * br)
        self.assertTrue(np.shares_memory(y, recv))
        self.assertFalse(y.flags.c_contiguous)

    def test_block_groups(self):
        peers = load_peers()
        for n in range(0, 20):
            for parts in (1, 2, 3, 4, 7):
                firsts, counts = peers.blocks(n, parts)
                listed = [(f + i * w, w) for f, k, w in peers.block_groups(n, parts)
                          for i in range(k)]
                self.assertEqual(listed, [(f, c) for f, c in zip(firsts, counts) if c])


if __name__ == "__main__":
    unittest.main()
