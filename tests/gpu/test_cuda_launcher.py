"""CUDAKernel on a real GPU: hand-written PTX assembled with ptxas, launched through the driver."""

import threading

import pytest
import torch

from inductor_tile.kernel_compiler.runtime.cuda_tools import assemble_ptx
from model_benchmarks.ptx_samples import ADD_PTX

pytestmark = pytest.mark.gpu

# one parameter of each scalar width, each written back to memory (ints widened to 64 bits)
SCALARS_PTX = """\
.version 8.0
.target sm_80
.address_size 64

.visible .entry scalars(
    .param .u64 ints_ptr,
    .param .u64 floats_ptr,
    .param .s8 a,
    .param .s16 b,
    .param .s32 c,
    .param .s64 d,
    .param .u8 e,
    .param .u32 u,
    .param .f32 f,
    .param .f64 g
)
{
    .reg .b16 %rs<4>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<12>;
    .reg .f32 %f<2>;
    .reg .f64 %fd<3>;

    ld.param.u64 %rd1, [ints_ptr];
    ld.param.u64 %rd2, [floats_ptr];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    ld.param.s8 %rs1, [a];
    cvt.s64.s16 %rd3, %rs1;
    st.global.u64 [%rd1], %rd3;
    ld.param.s16 %rs2, [b];
    cvt.s64.s16 %rd4, %rs2;
    st.global.u64 [%rd1+8], %rd4;
    ld.param.s32 %r1, [c];
    cvt.s64.s32 %rd5, %r1;
    st.global.u64 [%rd1+16], %rd5;
    ld.param.s64 %rd6, [d];
    st.global.u64 [%rd1+24], %rd6;
    ld.param.u8 %rs3, [e];
    cvt.u64.u16 %rd7, %rs3;
    st.global.u64 [%rd1+32], %rd7;
    ld.param.u32 %r2, [u];
    cvt.u64.u32 %rd8, %r2;
    st.global.u64 [%rd1+40], %rd8;
    ld.param.f32 %f1, [f];
    cvt.f64.f32 %fd1, %f1;
    st.global.f64 [%rd2], %fd1;
    ld.param.f64 %fd2, [g];
    st.global.f64 [%rd2+8], %fd2;
    ret;
}
"""

ADD_KINDS = ["*fp32", "*fp32", "*fp32", "i32"]
NUM_WARPS = 4
BLOCK = 32 * NUM_WARPS


@pytest.fixture(scope="module")
def launcher():
    from inductor_tile.kernel_compiler.runtime import cuda_launcher
    return cuda_launcher


@pytest.fixture(scope="module")
def arch() -> str:
    major, minor = torch.cuda.get_device_capability()
    return f"sm_{major}{minor}"


@pytest.fixture(scope="module")
def add_cubin(arch) -> bytes:
    return assemble_ptx(ADD_PTX, arch, "add_f32")


@pytest.fixture(scope="module")
def add_kernel(launcher, add_cubin):
    return launcher.CUDAKernel(add_cubin, "add_f32", ADD_KINDS, NUM_WARPS, 0)


def _inputs(n: int, pad: int = 37):
    gen = torch.Generator(device="cuda").manual_seed(n)
    x = torch.randn(n, device="cuda", generator=gen)
    y = torch.randn(n, device="cuda", generator=gen)
    out = torch.full((n + pad,), float("nan"), device="cuda")  # the tail past n must stay NaN
    return x, y, out


def _grid(n: int) -> tuple[int, int, int]:
    return (-(-n // BLOCK), 1, 1)


def _check(x, y, out, n):
    torch.cuda.synchronize()
    assert torch.equal(out[:n], x + y)
    assert torch.isnan(out[n:]).all()


@pytest.mark.parametrize("n", [1, 127, 128, 1000, 100_003])
def test_add_from_cubin(add_kernel, n):
    x, y, out = _inputs(n)
    add_kernel.launch((x, y, out, n), _grid(n))
    _check(x, y, out, n)


@pytest.mark.parametrize("as_bytes", [False, True])
def test_add_from_ptx_text(launcher, as_bytes):
    image = ADD_PTX.encode() if as_bytes else ADD_PTX
    kernel = launcher.CUDAKernel(image, "add_f32", ADD_KINDS, NUM_WARPS, 0)
    n = 5000
    x, y, out = _inputs(n)
    kernel.launch((x, y, out, n), _grid(n))
    _check(x, y, out, n)


def test_int_addresses_and_zero_grid(add_kernel):
    n = 300
    x, y, out = _inputs(n)
    add_kernel.launch((x.data_ptr(), y.data_ptr(), out.data_ptr(), n), _grid(n))
    _check(x, y, out, n)
    before = out.clone()
    add_kernel.launch((x, x, out, n), (0, 1, 1))
    add_kernel.launch((x, x, out, n), (3, 0, 1))
    torch.cuda.synchronize()
    assert torch.equal(out[:n], before[:n])


def test_scalar_kinds(launcher, arch):
    kinds = ["*i64", "*fp64", "i8", "i16", "i32", "i64", "i1", "u32", "fp32", "fp64"]
    kernel = launcher.CUDAKernel(assemble_ptx(SCALARS_PTX, arch, "scalars"), "scalars", kinds, 1, 0)
    ints = torch.zeros(6, dtype=torch.int64, device="cuda")
    floats = torch.zeros(2, dtype=torch.float64, device="cuda")
    kernel.launch((ints, floats, -5, -300, -70_000, -(2**40), True, 3_000_000_000, 1.5, -2.25), (1, 1, 1))
    torch.cuda.synchronize()
    assert ints.tolist() == [-5, -300, -70_000, -(2**40), 1, 3_000_000_000]
    assert floats.tolist() == [1.5, -2.25]


def test_bad_arguments_raise(add_kernel):
    x, y, out = _inputs(10)
    with pytest.raises(TypeError, match="takes 4 runtime arguments"):
        add_kernel.launch((x, y, out), (1, 1, 1))
    with pytest.raises(TypeError, match=r"argument 3 \(i32\)"):
        add_kernel.launch((x, y, out, 2**40), (1, 1, 1))
    with pytest.raises(ValueError, match="grid"):
        add_kernel.launch((x, y, out, 10), (1, 1))


def test_driver_error_names_kernel_and_grid(add_kernel, launcher):
    x, y, out = _inputs(10)
    with pytest.raises(launcher.CUDADriverError, match=r"add_f32.*grid=\(1, 70000, 1\).*CUDA_ERROR_INVALID_VALUE"):
        add_kernel.launch((x, y, out, 10), (1, 70_000, 1))  # gridDim.y is limited to 65535


def test_cuda_graph_capture_and_replay(add_kernel):
    n = 4096
    x, y, out = _inputs(n)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture, as torch recommends
        add_kernel.launch((x, y, out, n), _grid(n))
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    out.fill_(float("nan"))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        add_kernel.launch((x, y, out, n), _grid(n))
    torch.cuda.synchronize()
    assert torch.isnan(out).all()  # capturing ran nothing
    for step in range(3):
        x.copy_(torch.randn(n, device="cuda"))
        graph.replay()
        _check(x, y, out, n)


def test_non_default_stream(add_kernel):
    n = 10_000
    x, y, out = _inputs(n)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # torch's current stream is `stream`
        add_kernel.launch((x, y, out, n), _grid(n))
    stream.synchronize()
    assert torch.equal(out[:n], x + y)
    out2 = torch.full_like(out, float("nan"))
    stream.wait_stream(torch.cuda.current_stream())
    add_kernel.launch((x, y, out2, n), _grid(n), stream=stream.cuda_stream)  # an explicit raw stream
    stream.synchronize()
    _check(x, y, out2, n)


def test_large_dynamic_shared_memory(launcher, add_cubin):
    optin = torch.cuda.get_device_properties(0).shared_memory_per_block_optin
    if optin <= 64 * 1024:
        pytest.skip(f"this device opts in to only {optin} bytes of shared memory")
    kernel = launcher.CUDAKernel(add_cubin, "add_f32", ADD_KINDS, NUM_WARPS, 64 * 1024)
    n = 1000
    x, y, out = _inputs(n)
    kernel.launch((x, y, out, n), _grid(n))
    _check(x, y, out, n)


def test_too_much_shared_memory_raises(launcher, add_cubin):
    optin = torch.cuda.get_device_properties(0).shared_memory_per_block_optin
    with pytest.raises(launcher.SharedMemoryError, match=rf"add_f32.*at most {optin}"):
        launcher.CUDAKernel(add_cubin, "add_f32", ADD_KINDS, NUM_WARPS, optin + 1)


def test_too_many_threads_raise(launcher, add_cubin):
    with pytest.raises(launcher.KernelResourceError, match="num_warps=64"):
        launcher.CUDAKernel(add_cubin, "add_f32", ADD_KINDS, 64, 0)


def test_launch_from_a_fresh_thread(add_kernel):
    """A thread that never touched CUDA has no current context; the launcher sets torch's."""
    n = 999
    x, y, out = _inputs(n)
    torch.cuda.synchronize()
    errors = []

    def work() -> None:
        try:
            add_kernel.launch((x, y, out, n), _grid(n))
        except Exception as e:  # reported below
            errors.append(e)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert not errors
    _check(x, y, out, n)


def test_packer_is_per_thread(add_kernel):
    n = 2048
    results = {}

    def work(seed: int) -> None:
        x, y, out = _inputs(n)
        x.fill_(seed)
        for _ in range(200):
            add_kernel.launch((x, y, out, n), _grid(n))
        torch.cuda.synchronize()
        results[seed] = torch.equal(out[:n], x + y)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {i: True for i in range(4)}
