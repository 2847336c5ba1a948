"""A @jit function's source text comes from its file's syntax tree (runtime/function_source.py), not from
inspect's tokenizer: the same text and first line as inspect gives (up to trailing comments), for decorated,
nested and multi-line definitions; one parse serves a file's definitions; in generated modules the text is read at
its first need;
the cache key follows a source replaced after the fact (triton_shim's `_unsafe_update_src`).  A generated
module that names nothing but the package gives its kernels their keys from its text (codegen/runtime.py):
a warm start reads no kernel source."""

import importlib.util
import inspect
import textwrap

import pytest

from inductor_tile.kernel_compiler.runtime import function_source
from inductor_tile.kernel_compiler.runtime.jit import JITFunction

MODULE = '''
import inductor_tile
import inductor_tile.language as tl

SCALE = 3


def other_decorator(fn):
    return fn


@inductor_tile.jit
def first(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    s = """a string
over lines"""
    tl.store(x_ptr + i, tl.load(x_ptr + i, mask=i < n) * SCALE, mask=i < n)


@other_decorator
@inductor_tile.jit(
    do_not_specialize=("n",),
)
def second(x_ptr, n,
           BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(x_ptr + i, first_helper(i), mask=i < n)
    # a trailing comment in the body


@inductor_tile.jit
def first_helper(i):
    return i + 1


def make():
    @inductor_tile.jit
    def nested(x_ptr):
        tl.store(x_ptr, 1)

    return nested
'''


@pytest.fixture
def module(tmp_path):
    path = tmp_path / "kernels_for_source.py"
    path.write_text(MODULE)
    spec = importlib.util.spec_from_file_location("kernels_for_source", path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def _inspected(fn):
    lines, first = inspect.getsourcelines(fn.fn)
    return textwrap.dedent("".join(lines)), first


@pytest.mark.parametrize("name", ["first", "second", "first_helper", "nested"])
def test_the_text_and_first_line_are_inspects(module, name):
    fn = module.make() if name == "nested" else getattr(module, name)
    src, first = _inspected(fn)
    assert fn.first_line == first
    assert fn.src == src.replace("    # a trailing comment in the body\n", "")
    assert fn.parse().name == name


def test_one_parse_serves_a_files_definitions(tmp_path, monkeypatch):
    parses = []
    real_parse = function_source.ast.parse
    monkeypatch.setattr(function_source.ast, "parse", lambda text, *a: parses.append(a) or real_parse(text, *a))
    path = tmp_path / "kernels_parsed_once.py"
    path.write_text(MODULE)
    spec = importlib.util.spec_from_file_location("kernels_parsed_once", path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    loaded.make()
    assert len(parses) == 1  # read at their definition, one after another


def test_the_cache_key_needs_no_second_parse_and_names_the_helpers(module, monkeypatch):
    fn = module.second
    monkeypatch.setattr(JITFunction, "parse", lambda self: pytest.fail("parsed again"))
    key = fn.cache_key
    monkeypatch.undo()
    fresh = JITFunction(fn.fn, ("n",))
    fresh.__dict__.pop("_definition")  # the key below from a parse of the text: the same
    assert fresh.cache_key == key


def test_a_replaced_source_changes_the_key(module):
    from inductor_tile.tools.triton_shim import JITFunction as ShimJIT

    fn = ShimJIT(module.first.fn)
    before = JITFunction(module.first.fn).cache_key
    fn._unsafe_update_src(fn.src.replace("* SCALE", "* SCALE * 2"))
    assert fn.cache_key != before


def test_the_source_is_read_at_its_first_need_where_asked(module):
    from inductor_tile.kernel_compiler.runtime.jit import sources_read_when_needed

    assert "src" in JITFunction(module.first.fn).__dict__
    with sources_read_when_needed():
        fresh = JITFunction(module.first.fn)
    assert "src" not in fresh.__dict__ and fresh.first_line == _inspected(module.first)[1]
    assert fresh.src == _inspected(module.first)[0]


GENERATED = '''import inductor_tile
import inductor_tile.language as tl{extra}


@inductor_tile.jit
def _combine0(a, b):
    return a + b


@inductor_tile.jit(do_not_specialize=("seed",))
def gen_kernel_{tag}(x_ptr, seed, XBLOCK: tl.constexpr):
    i = tl.arange(0, XBLOCK)
    tl.store(x_ptr + i, tl.associative_scan(tl.load(x_ptr + i) * {factor}, 0, _combine0))
'''


def _generated(tag, factor, extra=""):
    from inductor_tile.codegen.runtime import load_kernel

    return load_kernel(f"gen_kernel_{tag}", GENERATED.format(tag=tag, factor=factor, extra=extra))


def test_a_generated_kernels_key_comes_from_its_modules_text(gen):
    import random

    tag = f"k{random.randrange(10**9)}"
    fn = _generated(tag, 2.5)
    assert "_cache_key" in fn.__dict__ and "src" not in fn.__dict__  # keyed without reading the source
    assert _generated(tag + "b", 2.5).cache_key != fn.cache_key  # another module text (its name)
    assert _generated(tag, 3.5).cache_key != fn.cache_key  # another constant in the kernel
    helper = fn.fn.__globals__["_combine0"]
    assert helper.cache_key not in (fn.cache_key, _generated(tag, 3.5).fn.__globals__["_combine0"].cache_key)


def test_a_generated_module_naming_more_gets_keys_from_what_its_functions_name():
    import random

    tag = f"k{random.randrange(10**9)}"
    fn = _generated(tag, 2.5, extra="\nimport math")
    assert "_cache_key" not in fn.__dict__
    assert fn.cache_key and "src" in fn.__dict__


def test_a_function_without_a_file_still_says_so():
    namespace = {}
    exec("def no_file(x):\n    return x\n", namespace)
    with pytest.raises(OSError):
        JITFunction(namespace["no_file"])
