"""What `make test-cpus` found of listening at each level: tests/test_listen_determinism.py wrote, per
level and runtime, the features' digests and the token ids, text and word times of each recording
(HEARTH_CPU_RECORD). Prints one line per runtime and level: the same as the first level, or what
differs (tokens, texts, word times, by how much). Exits 0: a difference across levels is reported,
not failed (the int8 runtimes quantize with VNNI where the CPU has it); the features must agree.

    python scripts/listen_levels.py RECORD_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _compare(first: dict, other: dict) -> str:
    tokens = same_tokens = texts = same_texts = 0
    shift = 0.0
    words_differ = 0
    for name, pieces in first["heard"].items():
        for a, b in zip(pieces, other["heard"][name], strict=True):
            tokens += max(len(a["ids"]), len(b["ids"]))
            same_tokens += sum(x == y for x, y in zip(a["ids"], b["ids"], strict=False))
            texts += 1
            same_texts += a["text"] == b["text"]
            if [w[0] for w in a["words"]] != [w[0] for w in b["words"]]:
                words_differ += 1
            else:
                for wa, wb in zip(a["words"], b["words"], strict=True):
                    shift = max(shift, abs(wa[1] - wb[1]), abs(wa[2] - wb[2]))
    if same_tokens == tokens and same_texts == texts and not words_differ and shift == 0:
        return "the same token ids, transcripts and word times"
    return (f"token ids {same_tokens}/{tokens} equal, transcripts {same_texts}/{texts} equal, word times "
            + (f"of {words_differ} piece(s) over other words" if words_differ else f"within {shift * 1000:.0f} ms"))


def main(record: Path) -> int:
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(record.glob("*.json"))]
    if not runs:
        print(f"listen-levels: nothing recorded in {record}", file=sys.stderr)
        return 2
    features = {json.dumps(r["features"], sort_keys=True) for r in runs}
    levels = sorted({(r["level"], r["simd"]) for r in runs})
    print(f"listen-levels: features {'the same bits' if len(features) == 1 else 'DIFFER'} at "
          f"{', '.join(f'{lv} ({s})' for lv, s in levels)}")
    for runtime in sorted({r["runtime"] for r in runs}):
        mine = [r for r in runs if r["runtime"] == runtime]
        base = mine[0]
        for r in mine[1:]:
            print(f"listen-levels: {runtime}: {r['level']} ({r['simd']}) against {base['level']} ({base['simd']}): "
                  f"{_compare(base, r)}")
    return 0 if len(features) == 1 else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
