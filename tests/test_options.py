"""Options (c2gpu/drivers/options.py) and the pipeline they select (c2gpu/pipeline.py, c2gpu/drivers/driver.py): checked once,
frozen, one message per bad value, the same for the command line and the API."""
from __future__ import annotations

import dataclasses

import pytest

import c2gpu
from c2gpu.drivers.driver import pipeline_passes
from c2gpu.model.gpu import load_gpu
from c2gpu.drivers.options import Options, OptionsError, load_gpu_option, parse_block, parse_defines, parse_params
from c2gpu.pipeline import ANALYZE, PIPELINES, PORT


def test_defines_as_mapping_or_list():
    assert parse_defines({"N": 512, "DEBUG": None}) == parse_defines(["N=512", "DEBUG"])
    assert parse_defines(None) == ()
    with pytest.raises(OptionsError, match="invalid -D definition"):
        parse_defines(["=3"])


def test_params_and_block():
    assert parse_params(["n=2048", "m = 0x10"]) == (("n", 2048), ("m", 16))
    with pytest.raises(OptionsError, match="--param 'n': expected NAME=INTEGER"):
        parse_params(["n"])
    assert parse_block("32x8") == (32, 8) and parse_block("256") == (256,)
    for bad in ("32xa", "0x8", "64x32", "1x1x1x1"):
        with pytest.raises(OptionsError, match=f"--block '{bad}'"):
            parse_block(bad)


def test_options_are_frozen_and_checked():
    o = Options()
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.run_cpu = False
    with pytest.raises(OptionsError, match="--shared-budget must be a number of bytes >= 0"):
        Options(shared_budget=-1)
    with pytest.raises(OptionsError, match="--gpu: "):
        load_gpu_option("no-such-gpu")
    assert isinstance(OptionsError("x"), ValueError)          # what the Python API raises


def test_pass_options():
    plain = Options(map=("i", "j"), block=(32, 8), shared_force=("A",)).pass_options()
    assert plain == {"assume_no_alias": False, "shared_memory": "auto", "map": ["i", "j"], "block": (32, 8),
                     "shared_force": ("A",)}
    gpu = load_gpu("a100")
    with_gpu = Options(gpu=gpu, params=(("n", 64),), models=("gpuperf",)).pass_options()
    assert with_gpu["gpu"] is gpu and with_gpu["params"] == {"n": 64} and with_gpu["models"] == ["gpuperf"]


def test_pipelines():
    assert set(PIPELINES) == {"analyze", "port"} and all(p.description for p in PIPELINES.values())
    assert pipeline_passes(Options(pipeline="analyze")) == ANALYZE.passes
    assert pipeline_passes(Options()) == PORT.passes
    gpu = load_gpu("a100")
    assert pipeline_passes(Options(gpu=gpu)) == PORT.passes + ("performance",)
    # a GPU adds what the prediction and the reports need: the reorder `port` makes (right after normalize),
    # the tiles it compares, the plan, the prediction
    assert pipeline_passes(Options(gpu=gpu, passes=("normalize",))) == ("normalize", "reorder", "shared-memory",
                                                                          "plan", "performance")
    assert pipeline_passes(Options(gpu=gpu, passes=("normalize", "performance"))) == (
        "normalize", "reorder", "performance", "shared-memory", "plan")


def test_api_option_errors():
    with pytest.raises(ValueError, match="params need a gpu"):
        c2gpu.analyze("void f(void) {}", params={"n": 4})
    with pytest.raises(ValueError, match="model 'nope'"):
        c2gpu.analyze("void f(void) {}", gpu="a100", model="nope")
    with pytest.raises(ValueError, match="invalid -D definition"):
        c2gpu.analyze("void f(void) {}", defines=["=3"])
