"""The `hearth` command's arguments: one model group on every command that loads a model, the same
flags with the same meaning (`--cpu` included, run for real), and `hearth --help` in sections."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pytest
from cli import hearth as run

from hearth.cli import SECTIONS, parser
from hearth.cli.arguments import MODEL_GROUP

LOADS_A_MODEL = ("say", "codes", "speak", "soak", "chat", "serve", "cluster", "wyoming", "bench")
MODEL_FLAGS = {"--model", "--fast", "--small", "--backend", "--weights", "--vocoder", "--device", "--vocoder-device",
               "--lm-threads", "--vocoder-threads", "--overlap", "--dtype", "--cpu"}


def _commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _model_group(command: argparse.ArgumentParser) -> dict[str, tuple]:
    groups = [g for g in command._action_groups if g.title == MODEL_GROUP]
    assert len(groups) == 1, [g.title for g in command._action_groups]
    return {a.option_strings[0]: (tuple(a.option_strings), a.choices and tuple(a.choices), a.nargs, a.metavar,
                                  getattr(a.type, "__name__", None), type(a).__name__,
                                  None if a.dest == "model" else a.default, a.help if a.dest != "model" else None)
            for a in groups[0]._group_actions}


def test_every_command_that_loads_a_model_takes_the_same_model_group():
    commands = _commands()
    groups = {name: _model_group(commands[name]) for name in LOADS_A_MODEL}
    assert set(groups["say"]) == MODEL_FLAGS
    for name, group in groups.items():
        assert group == groups["say"], name  # the same flags, types, choices, defaults and help
    # and nowhere else on those commands (no second, differing --backend)
    for name in LOADS_A_MODEL:
        grouped = {a.dest for g in commands[name]._action_groups if g.title == MODEL_GROUP for a in g._group_actions}
        others = [a for a in commands[name]._actions if a.dest in grouped]
        assert len(others) == len(grouped), name


def test_the_model_flags_parse_alike_on_every_command(tiny_dir):
    flags = ["--model", str(tiny_dir), "--backend", "onnxruntime", "--weights", "int4", "--vocoder", "onnxruntime",
             "--lm-threads", "1", "--vocoder-threads", "1", "--no-overlap", "--cpu", "avx2"]
    positional = {"say": ["hi"], "codes": ["hi"], "chat": ["--llm", "http://127.0.0.1:1/v1"]}
    for name in LOADS_A_MODEL:
        args = parser().parse_args([name, *positional.get(name, []), *flags])
        assert (args.model, args.backend, args.weights, args.vocoder, args.lm_threads, args.vocoder_threads,
                args.overlap, args.cpu) == (str(tiny_dir), "onnxruntime", "int4", "onnxruntime", 1, 1, False,
                                            "avx2"), name


def test_help_lists_every_command_once_speaking_and_serving_first():
    listed = [n for _, names in SECTIONS for n in names]
    assert sorted(listed) == sorted(_commands()) and len(listed) == len(set(listed))
    assert SECTIONS[0][1][:2] == ("say", "speak") and "bench" in SECTIONS[-1][1]
    out = run("--help").stdout.decode()
    assert [t for t, _ in SECTIONS] == [line[:-1] for line in out.splitlines() if line[:-1] in dict(SECTIONS)]
    for name in listed:
        assert f"\n  {name} " in out


def _cpuid_faulting() -> bool:
    return "cpuid_fault" in Path("/proc/cpuinfo").read_text(encoding="utf-8").split() and shutil.which("cc") is not None


@pytest.mark.skipif(not _cpuid_faulting(), reason="--cpu needs CPUID faulting and a C compiler")
@pytest.mark.slow  # (hearth commands under a CPUID mask: processes of their own)
def test_cpu_on_say_and_speak_runs_as_on_an_avx2_machine_with_the_same_output(tiny_dir):
    """`--cpu avx2` (refused on `say` and `speak` before): the process sees an AVX2 CPU, so its
    default backend is that machine's (ONNX Runtime), and a seeded sentence comes out as it does
    unmasked on that backend: the same codes, and through ONNX Runtime's fp32 vocoder the same
    samples (OpenVINO's vocoders and torch's take other kernels on AVX2 and differ in the last bits:
    docs/determinism.md)."""
    common = ["--model", str(tiny_dir), "--seed", "7", "--max-new-tokens", "8"]
    masked = run("-v", "codes", *common, "--cpu", "avx2", "Hello there.")
    plain = run("codes", *common, "--backend", "onnxruntime", "Hello there.")
    assert masked.returncode == 0 and plain.returncode == 0, masked.stderr.decode() + plain.stderr.decode()
    assert b"(onnxruntime)" in masked.stderr  # the default an AVX2 machine gets
    assert masked.stdout == plain.stdout
    speak = ["-v", "speak", "--model", str(tiny_dir), "--seed", "3", "--max-new-tokens", "6", "--sink", "raw",
             "--vocoder", "onnxruntime"]
    masked = run(*speak, "--cpu", "avx2", stdin=b"A short line.\n")
    plain = run(*speak, "--backend", "onnxruntime", stdin=b"A short line.\n")
    assert masked.returncode == 0 and plain.returncode == 0, masked.stderr.decode() + plain.stderr.decode()
    assert b"(onnxruntime)" in masked.stderr
    assert len(masked.stdout) > 0 and masked.stdout == plain.stdout


@pytest.mark.skipif(not _cpuid_faulting(), reason="--cpu needs CPUID faulting and a C compiler")
@pytest.mark.slow  # (hearth commands under a CPUID mask: processes of their own)
def test_cpu_sse42_speaks_on_onnx_runtime_and_refuses_openvino_s_language_model(tiny_dir):
    """An x86 without AVX2 (`--cpu sse42`: the Celeron and Atom NAS class): the default (ONNX
    Runtime) speaks; OpenVINO's language model, whose paged attention has no kernel there, is refused
    with what to use instead, before anything loads (exit 2), not a runtime error mid-sentence."""
    common = ["--model", str(tiny_dir), "--seed", "7", "--max-new-tokens", "8", "--cpu", "sse42"]
    said = run("-v", "say", "Hello there.", *common, "--out", "-")
    assert said.returncode == 0 and b"(onnxruntime)" in said.stderr, said.stderr.decode()[-2000:]
    assert len(said.stdout) > 44
    refused = run("say", "Hello there.", *common, "--backend", "openvino", "--out", "-")
    assert refused.returncode == 2 and b"without AVX2" in refused.stderr and refused.stdout == b"", refused.stderr
