#!/bin/sh
# The arm64 smoke set, run inside the root that scripts/arm64.sh builds (or on a real board, from a
# checkout after `make setup`). Each step prints its time; the first failure ends the run non-zero.
#
#   HEARTH_SMOKE_EXPORT=DIR   also load an export made elsewhere (`hearth export` on x86)
#   HEARTH_SMOKE_TESTS=0      skip the pytest smoke set
set -eu
PY=${PYTHON:-python}
WORK=${HEARTH_SMOKE_DIR:-/tmp/hearth-smoke}
mkdir -p "$WORK"
find "$WORK" -mindepth 1 -maxdepth 1 ! -name tiny -exec rm -rf {} +  # the checkpoint stays: its conversions too
total=$(date +%s)

step() {  # step NAME COMMAND...
    name=$1
    shift
    t0=$(date +%s)
    echo "== $name" >&2
    "$@"
    echo "== $name: ok in $(($(date +%s) - t0)) s" >&2
}

audible() {  # a WAV file with sound in it
    $PY - "$1" <<'EOF'
import sys, wave
import numpy as np
with wave.open(sys.argv[1]) as w:
    a = np.frombuffer(w.readframes(w.getnframes()), np.int16)
    print(f"{sys.argv[1]}: {len(a) / w.getframerate():.2f} s at {w.getframerate()} Hz, peak {np.abs(a).max()}",
          file=sys.stderr)
    assert len(a) > 0 and np.abs(a).max() > 0, "silent"
EOF
}

step "uname and doctor" sh -c "uname -m && hearth doctor"
[ -f "$WORK/tiny/config.json" ] || step "a tiny random checkpoint" $PY -m hearth.tools.random_checkpoint "$WORK/tiny" --size tiny
# The plain default first: what a new user on a board runs.
step "hearth say (the default)" hearth say "Hello from an arm board." --model "$WORK/tiny" --seed 1 \
    --out "$WORK/say.wav"
audible "$WORK/say.wav"
step "hearth say --backend torch" hearth say "The reference." --model "$WORK/tiny" --backend torch --seed 1 \
    --out "$WORK/torch.wav"
audible "$WORK/torch.wav"
step "hearth export here, and say from it" sh -c "hearth export '$WORK/tiny' '$WORK/exported' &&
    hearth say 'From the export.' --model '$WORK/exported' --seed 1 --out '$WORK/exported.wav'"
audible "$WORK/exported.wav"
if [ -n "${HEARTH_SMOKE_EXPORT:-}" ]; then
    step "say from an export made elsewhere" hearth say "Made on another machine." --model "$HEARTH_SMOKE_EXPORT" \
        --seed 1 --out "$WORK/foreign.wav"
    audible "$WORK/foreign.wav"
fi
step "hearth serve, one request; hearth wyoming, one request" $PY scripts/arm64_servers.py "$WORK/tiny"
if [ "${HEARTH_SMOKE_TESTS:-1}" != 0 ]; then
    step "pytest smoke set: the portable modules" $PY -m pytest -q -p no:cacheprovider tests/test_topology.py \
        tests/test_checkpoint.py tests/test_tokenizer.py tests/test_generate.py tests/test_voice_rules.py -m "not slow"
    step "pytest smoke set: ONNX Runtime (one runtime, --fast, an export copied)" $PY -m pytest -q \
        -p no:cacheprovider tests/test_onnxruntime.py -k "one_runtime or fast_is or export"
fi
echo "arm64 smoke: all passed in $(($(date +%s) - total)) s on $(uname -m) (emulated figures are not speed)" >&2
