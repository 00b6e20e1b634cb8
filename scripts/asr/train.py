#!/usr/bin/python3
"""Train the tiny streaming transducer that Cadenza's transcription tests decode.

No pretrained speech model can be downloaded where Cadenza is developed, so the tests need a model
this project makes itself. This script:

  1. synthesizes a small closed-vocabulary corpus with espeak-ng (digits, a few names, call
     phrases) in several voices, speeds and pitches, made into 8 kHz phone legs with sox (gain
     and tempo variation, silence and noise added at 8 kHz, the 300-3400 Hz band), resampled to
     16 kHz (what sherpa-onnx computes its features at);
  2. trains an RNN transducer: a streaming LSTM encoder over 80-bin kaldi fbank (frame stacking
     by 4, so sherpa-onnx's timestamps of 40 ms per encoder frame hold), a stateless decoder
     (embedding, context size 2) and a joiner: a CTC head on the encoder alone first
     (--ctc-warmup epochs), then torchaudio.functional.rnnt_loss plus half the CTC loss;
  3. exports encoder/decoder/joiner to ONNX with the metadata that sherpa-onnx's LSTM transducer
     reads (model_type=lstm, num_encoder_layers, T, decode_chunk_len, rnn_hidden_size, d_model;
     vocab_size, context_size), plus tokens.txt.

Run with Debian's python3-torch (1.13) and python3-torchaudio (0.13), single-threaded:
    npm run train:asr            (== nice -n 15 /usr/bin/python3 scripts/asr/train.py)

The tokens are whole words written with the sentencepiece word-start mark (U+2581), so the words
come out of sherpa-onnx exactly as they would from a BPE model: a token starting with the mark
begins a new word.
"""

import argparse
import copy
import io
import json
import math
import os
import random
import subprocess
import sys
import time
import wave

import numpy as np
import torch
import torch.nn as nn
import torchaudio

torch.set_num_threads(1)

WORD_MARK = "\u2581"

NAMES = ["alice", "bob", "maria", "james", "priya", "chen"]
DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
DAYS = ["monday", "friday", "tomorrow"]
PHRASE_WORDS = [
    "hello", "hi", "this", "is", "calling", "from", "cadenza", "thanks", "for", "your", "time",
    "can", "we", "talk", "yes", "no", "sure", "call", "me", "back", "at", "my", "number",
    "goodbye", "meeting", "works", "great", "the",
]
VOCAB = sorted(set(NAMES + DIGITS + DAYS + PHRASE_WORDS))

# Voices seen in training; the held-out set uses a voice and variants never trained on.
TRAIN_VOICES = ["en-us", "en-gb", "en-gb-scotland", "en-gb-x-rp", "en-gb-x-gbclan", "en-gb-x-gbcwmd"]
TRAIN_VARIANTS = ["", "+m1", "+m2", "+m3", "+m5", "+f1", "+f2", "+f4"]
HELDOUT_VOICES = ["en-029"]
HELDOUT_VARIANTS = ["+m4", "+f3"]

SAMPLE_RATE = 16000
NUM_BINS = 80
SUBSAMPLING = 4  # frames stacked per encoder step; sherpa-onnx assumes 4 for timestamps
DECODE_CHUNK_LEN = 32  # fbank frames per streaming step (320 ms)
CONTEXT_SIZE = 2
BLANK = 0


def sentence(rng):
    """One utterance of the closed vocabulary, from call-like templates or a random word run."""
    d = lambda k: " ".join(rng.choice(DIGITS) for _ in range(k))
    templates = [
        lambda: f"hello this is {rng.choice(NAMES)} calling from cadenza",
        lambda: f"hi {rng.choice(NAMES)}",
        lambda: f"is this {rng.choice(NAMES)}",
        lambda: f"my number is {d(rng.randint(3, 7))}",
        lambda: f"call me back at {d(rng.randint(3, 7))}",
        lambda: f"can we talk {rng.choice(DAYS)}",
        lambda: f"yes {rng.choice(DAYS)} works",
        lambda: f"sure the meeting {rng.choice(DAYS)} works great",
        lambda: "no thanks",
        lambda: "thanks for your time goodbye",
        lambda: f"great thanks {rng.choice(NAMES)}",
        lambda: d(rng.randint(2, 6)),
    ]
    if rng.random() < 0.35:
        return " ".join(rng.choice(VOCAB) for _ in range(rng.randint(2, 7)))
    return rng.choice(templates)()


def read_wav_bytes(data):
    with wave.open(io.BytesIO(data)) as w:
        rate = w.getframerate()
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0
    return pcm, rate


PHONE_RATE = 8000


def sox(wav_bytes, effects):
    return subprocess.run(
        ["sox", "-t", "wav", "-", "-t", "wav", "-e", "signed-integer", "-b", "16", "-c", "1", "-", *effects],
        input=wav_bytes, check=True, capture_output=True,
    ).stdout


def wav_bytes(pcm, rate):
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1); w.setsampwidth(2); w.setframerate(rate)
        w.writeframes((np.clip(pcm, -1, 1) * 32767).astype("<i2").tobytes())
    return out.getvalue()


def synthesize(text, voice, speed, pitch, rng):
    """espeak-ng -> an 8 kHz phone leg (sox: tempo, gain, rate; silence and line noise added at
    8 kHz, then the 300-3400 Hz band) -> 16 kHz float samples in [-1, 1].

    Everything happens at 8 kHz, as on a call: a recording's leg holds nothing above 4 kHz, and
    a model trained with noise over the whole 16 kHz band learned to lean on that band (held-out
    WER 0.27 on such audio, 0.89 on the same sentences carried at 8 kHz)."""
    raw = subprocess.run(
        ["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "--stdout", text],
        check=True, capture_output=True,
    ).stdout
    pcm, rate = read_wav_bytes(sox(raw, ["tempo", f"{rng.uniform(0.9, 1.1):.3f}", "gain", f"{rng.uniform(-8, 2):.1f}", "rate", str(PHONE_RATE)]))
    assert rate == PHONE_RATE
    # Lead-in silence and line noise at a random SNR, as on a real call leg.
    lead = np.zeros(int(rng.uniform(0.05, 0.4) * PHONE_RATE), dtype=np.float32)
    tail = np.zeros(int(rng.uniform(0.1, 0.4) * PHONE_RATE), dtype=np.float32)
    pcm = np.concatenate([lead, pcm, tail])
    power = float(np.mean(pcm ** 2)) + 1e-12
    snr_db = rng.uniform(15, 40)
    noise = np.random.default_rng(rng.randrange(1 << 30)).normal(0, math.sqrt(power / 10 ** (snr_db / 10)), pcm.shape)
    pcm, rate = read_wav_bytes(sox(wav_bytes(pcm + noise.astype(np.float32), PHONE_RATE), ["sinc", "300-3400", "rate", str(SAMPLE_RATE)]))
    assert rate == SAMPLE_RATE
    return pcm


def fbank(samples):
    """What sherpa-onnx's online feature extractor computes: kaldi fbank, 80 bins, 25/10 ms,
    dither 0, snip_edges false, low 20 Hz, high -400 (i.e. 7.6 kHz), samples in [-1, 1]."""
    wav = torch.from_numpy(samples).unsqueeze(0)
    return torchaudio.compliance.kaldi.fbank(
        wav, num_mel_bins=NUM_BINS, sample_frequency=SAMPLE_RATE, dither=0.0, snip_edges=False,
        low_freq=20.0, high_freq=-400.0, energy_floor=0.0, frame_length=25.0, frame_shift=10.0,
    )


class Encoder(nn.Module):
    """Causal: 4 fbank frames stacked per step, a linear layer, a unidirectional LSTM, then the
    joiner's encoder projection (exported inside the encoder, as icefall does)."""

    def __init__(self, d_model, layers, joiner_dim, mean, std):
        super().__init__()
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)
        self.inp = nn.Linear(NUM_BINS * SUBSAMPLING, d_model)
        self.lstm = nn.LSTM(d_model, d_model, num_layers=layers, batch_first=True)
        self.proj = nn.Linear(d_model, joiner_dim)
        self.layers = layers
        self.d_model = d_model

    def forward(self, x, h, c):
        n = x.shape[0]
        x = (x - self.mean) / self.std
        x = x.reshape(n, -1, NUM_BINS * SUBSAMPLING)
        x = torch.relu(self.inp(x))
        y, (h2, c2) = self.lstm(x, (h, c))
        return self.proj(y), h2, c2


class Decoder(nn.Module):
    """Stateless: the last CONTEXT_SIZE tokens, embedded, concatenated, projected."""

    def __init__(self, vocab, embed, joiner_dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lin = nn.Linear(embed * CONTEXT_SIZE, joiner_dim)
        self.proj = nn.Linear(joiner_dim, joiner_dim)

    def forward(self, y):  # y: (N, CONTEXT_SIZE) int64 -> (N, joiner_dim)
        e = self.embed(y).reshape(y.shape[0], -1)
        return self.proj(torch.relu(self.lin(e)))


class Joiner(nn.Module):
    def __init__(self, joiner_dim, vocab):
        super().__init__()
        self.out = nn.Linear(joiner_dim, vocab)

    def forward(self, enc, dec):
        return self.out(torch.tanh(enc + dec))


def pad_frames(feats):
    extra = (-feats.shape[0]) % SUBSAMPLING
    if extra:
        feats = torch.cat([feats, feats.new_full((extra, feats.shape[1]), float(feats.min()))])
    return feats


def decoder_contexts(targets, lengths):
    """(B, U) targets -> (B, U+1, CONTEXT_SIZE) decoder inputs: blanks, then the labels so far."""
    b, u = targets.shape
    padded = torch.cat([torch.full((b, CONTEXT_SIZE), BLANK, dtype=torch.long), targets], dim=1)
    return torch.stack([padded[:, i:i + CONTEXT_SIZE] for i in range(u + 1)], dim=1)


def greedy(encoder, decoder, joiner, feats):
    """The same search sherpa-onnx runs: at most one symbol per encoder frame."""
    with torch.no_grad():
        h = torch.zeros(encoder.layers, 1, encoder.d_model)
        enc, _, _ = encoder(pad_frames(feats).unsqueeze(0), h, h.clone())
        ctx = [BLANK] * CONTEXT_SIZE
        dec = decoder(torch.tensor([ctx]))
        out = []
        for t in range(enc.shape[1]):
            k = int(joiner(enc[:, t], dec).argmax(-1))
            if k != BLANK:
                out.append(k)
                ctx = ctx[1:] + [k]
                dec = decoder(torch.tensor([ctx]))
        return out


def ctc_greedy(encoder, head, feats):
    """Best path of the CTC head (training aid): repeats merged, blanks dropped."""
    with torch.no_grad():
        h = torch.zeros(encoder.layers, 1, encoder.d_model)
        enc, _, _ = encoder(pad_frames(feats).unsqueeze(0), h, h.clone())
        best = head(enc)[0].argmax(-1).tolist()
    out, prev = [], BLANK
    for k in best:
        if k != BLANK and k != prev:
            out.append(k)
        prev = k
    return out


def wer(ref, hyp):
    r, h = ref.split(), hyp.split()
    d = list(range(len(h) + 1))
    for i in range(1, len(r) + 1):
        prev, d[0] = d[0], i
        for j in range(1, len(h) + 1):
            cur = min(d[j] + 1, d[j - 1] + 1, prev + (r[i - 1] != h[j - 1]))
            prev, d[j] = d[j], cur
    return d[len(h)], len(r)


def make_set(n, voices, variants, speeds, pitches, rng, label):
    items = []
    t0 = time.time()
    for i in range(n):
        text = sentence(rng)
        voice = rng.choice(voices) + rng.choice(variants)
        samples = synthesize(text, voice, rng.choice(speeds), rng.choice(pitches), rng)
        items.append((text, fbank(samples)))
        if (i + 1) % 500 == 0:
            print(f"  {label}: {i + 1}/{n} utterances ({time.time() - t0:.0f} s)", flush=True)
    return items


def export(encoder, decoder, joiner, out_dir, vocab_size, joiner_dim):
    import onnx

    os.makedirs(out_dir, exist_ok=True)
    encoder.eval(); decoder.eval(); joiner.eval()
    L, D = encoder.layers, encoder.d_model
    x = torch.zeros(1, DECODE_CHUNK_LEN, NUM_BINS)
    h = torch.zeros(L, 1, D)
    enc_path = os.path.join(out_dir, "encoder.onnx")
    torch.onnx.export(
        encoder, (x, h, h.clone()), enc_path, opset_version=13,
        input_names=["x", "h", "c"], output_names=["encoder_out", "next_h", "next_c"],
        dynamic_axes={"x": {0: "N", 1: "T"}, "h": {1: "N"}, "c": {1: "N"},
                      "encoder_out": {0: "N", 1: "T_out"}, "next_h": {1: "N"}, "next_c": {1: "N"}},
    )
    dec_path = os.path.join(out_dir, "decoder.onnx")
    torch.onnx.export(
        decoder, (torch.zeros(1, CONTEXT_SIZE, dtype=torch.long),), dec_path, opset_version=13,
        input_names=["y"], output_names=["decoder_out"],
        dynamic_axes={"y": {0: "N"}, "decoder_out": {0: "N"}},
    )
    join_path = os.path.join(out_dir, "joiner.onnx")
    torch.onnx.export(
        joiner, (torch.zeros(1, joiner_dim), torch.zeros(1, joiner_dim)), join_path, opset_version=13,
        input_names=["encoder_out", "decoder_out"], output_names=["logit"],
        dynamic_axes={"encoder_out": {0: "N"}, "decoder_out": {0: "N"}, "logit": {0: "N"}},
    )

    def add_meta(path, meta):
        m = onnx.load(path)
        for k, v in meta.items():
            p = m.metadata_props.add()
            p.key, p.value = k, str(v)
        onnx.save(m, path)

    # The keys sherpa-onnx's OnlineLstmTransducerModel reads (and its model-type probe).
    add_meta(enc_path, {
        "model_type": "lstm", "num_encoder_layers": L, "T": DECODE_CHUNK_LEN,
        "decode_chunk_len": DECODE_CHUNK_LEN, "rnn_hidden_size": D, "d_model": D,
        "comment": "Cadenza test fixture: tiny closed-vocabulary LSTM transducer on synthetic speech",
    })
    add_meta(dec_path, {"vocab_size": vocab_size, "context_size": CONTEXT_SIZE})
    add_meta(join_path, {"joiner_dim": joiner_dim})
    always_emits(join_path, os.path.join(out_dir, "always-emits", "joiner.onnx"), vocab_size)


def always_emits(src, dst, vocab_size, token=5):
    """A copy of the joiner whose output bias makes one token win every frame. With it the tests
    see sherpa-onnx emit a word each 40 ms whatever the model has learned, so the token, timestamp
    and turn handling is checked on the real runtime even for a model that recognizes nothing."""
    import onnx
    from onnx import numpy_helper

    m = onnx.load(src)
    for init in m.graph.initializer:
        a = numpy_helper.to_array(init)
        if a.ndim == 1 and a.shape[0] == vocab_size:
            b = a.copy()
            b[token] += 100.0
            init.CopyFrom(numpy_helper.from_array(b, init.name))
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    onnx.save(m, dst)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="test/fixtures/asr")
    ap.add_argument("--train-utts", type=int, default=2400)
    ap.add_argument("--test-utts", type=int, default=120)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--joiner-dim", type=int, default=128)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--ctc-weight", type=float, default=0.5)
    ap.add_argument("--ctc-warmup", type=int, default=9,
                    help="epochs that train the encoder with the CTC loss alone before the transducer's loss joins")
    ap.add_argument("--resume", action="store_true", help="continue from the last epoch's checkpoint in --cache")
    ap.add_argument("--init", help="start from this checkpoint's weights (a fresh optimizer, this corpus's normalisation); use with --ctc-warmup 0")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--cache", default="data/asr-corpus", help="where the synthesized corpus is cached (git-ignored)")
    ap.add_argument("--max-minutes", type=float, default=90.0, help="stop training after this long")
    args = ap.parse_args()

    random.seed(args.seed); np.random.seed(args.seed); torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    tokens = ["<blk>"] + [WORD_MARK + w for w in VOCAB]
    index = {w: i + 1 for i, w in enumerate(VOCAB)}
    V = len(tokens)

    # The synthesized corpus depends only on the seed and the sizes: cached (outside the
    # repository's tracked files) so that a second training run skips the synthesis.
    cache = os.path.join(args.cache, f"corpus-phone-{args.seed}-{args.train_utts}-{args.test_utts}.pt")
    if os.path.exists(cache):
        train, heldout = torch.load(cache)
        print(f"vocabulary: {len(VOCAB)} words; corpus from {cache}", flush=True)
    else:
        print(f"vocabulary: {len(VOCAB)} words; synthesizing {args.train_utts} training utterances", flush=True)
        train = make_set(args.train_utts, TRAIN_VOICES, TRAIN_VARIANTS, [130, 145, 160, 175, 190], [30, 40, 50, 60, 70], rng, "train")
        heldout = make_set(args.test_utts, HELDOUT_VOICES, HELDOUT_VARIANTS, [150, 168], [45, 55], rng, "held-out")
        os.makedirs(args.cache, exist_ok=True)
        torch.save((train, heldout), cache)
    rng = random.Random(args.seed + 1)

    allf = torch.cat([f for _, f in train[:500]])
    mean, std = allf.mean(0), allf.std(0).clamp(min=1e-3)
    encoder = Encoder(args.d_model, args.layers, args.joiner_dim, mean, std)
    decoder = Decoder(V, 64, args.joiner_dim)
    joiner = Joiner(args.joiner_dim, V)
    # Training aid, not exported: a CTC head on the encoder. Word-level transducers trained from
    # scratch on a small corpus sit for many epochs on the decoder's "language model" plateau,
    # emitting nothing, and so did the joint loss (RNN-T plus half the CTC) for 11 epochs. The CTC
    # loss alone, first (--ctc-warmup epochs), breaks through after about 7 epochs: the encoder then
    # aligns words to audio, and the transducer's loss joins on an encoder that already hears them.
    ctc_head = nn.Linear(args.joiner_dim, V)
    params = list(encoder.parameters()) + list(decoder.parameters()) + list(joiner.parameters()) + list(ctc_head.parameters())
    print(f"parameters: {sum(p.numel() for p in params):,}", flush=True)
    opt = torch.optim.Adam(params, lr=args.lr)

    data = [(pad_frames(f), torch.tensor([index[w] for w in t.split()])) for t, f in train]
    data.sort(key=lambda d: d[0].shape[0])
    batches = [data[i:i + args.batch] for i in range(0, len(data), args.batch)]
    rng.shuffle(batches)  # the same draws as before; epoch 1 then runs them sorted
    batches.sort(key=lambda b: b[0][0].shape[0])
    t_start = time.time()
    best, best_state = 2.0, None
    start_epoch = 0
    ckpt = os.path.join(args.cache, f"checkpoint-{args.seed}.pt")
    if args.init:
        state = torch.load(args.init)
        for m, st in zip((encoder, decoder, joiner, ctc_head), state["models"]):
            m.load_state_dict(st)
        # This corpus's feature statistics, not the checkpoint's: the weights adapt to them.
        encoder.mean.copy_(mean); encoder.std.copy_(std)
        print(f"weights from {args.init} (epoch {state['epoch']})", flush=True)
    if args.resume and os.path.exists(ckpt):
        state = torch.load(ckpt)
        for m, st in zip((encoder, decoder, joiner, ctc_head), state["models"]):
            m.load_state_dict(st)
        opt.load_state_dict(state["opt"])
        start_epoch, best = state["epoch"], state["best"]
        best_state = state["best_state"]
        print(f"resumed after epoch {start_epoch}", flush=True)
    for epoch in range(start_epoch, args.epochs):
        encoder.train(); decoder.train(); joiner.train()
        warmup = epoch < args.ctc_warmup
        # Shortest utterances first in the first epoch (SortaGrad): alignment starts sooner.
        if epoch > 0:
            rng.shuffle(batches)
        total = 0.0
        for batch in batches:
            B = len(batch)
            T = max(f.shape[0] for f, _ in batch)
            x = torch.stack([torch.cat([f, f.new_full((T - f.shape[0], NUM_BINS), float(f.min()))]) for f, _ in batch])
            U = max(len(y) for _, y in batch)
            y = torch.zeros(B, U, dtype=torch.long)
            for i, (_, yy) in enumerate(batch):
                y[i, :len(yy)] = yy
            ylen = torch.tensor([len(yy) for _, yy in batch], dtype=torch.int32)
            xlen = torch.tensor([f.shape[0] // SUBSAMPLING for f, _ in batch], dtype=torch.int32)
            h = torch.zeros(args.layers, B, args.d_model)
            enc, _, _ = encoder(x, h, h.clone())
            ctc_logp = torch.log_softmax(ctc_head(enc), -1).transpose(0, 1)
            ctc = nn.functional.ctc_loss(ctc_logp, y, xlen, ylen, blank=BLANK, reduction="sum", zero_infinity=True) / B
            if warmup:
                loss = ctc
            else:
                dec = decoder(decoder_contexts(y, ylen).reshape(-1, CONTEXT_SIZE)).reshape(B, U + 1, -1)
                logits = joiner(enc.unsqueeze(2), dec.unsqueeze(1))
                loss = torchaudio.functional.rnnt_loss(logits, y.int(), xlen, ylen, blank=BLANK, reduction="mean") + args.ctc_weight * ctc
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(params, 5.0)
            opt.step()
            total += float(loss)
        if epoch == args.ctc_warmup + int((args.epochs - args.ctc_warmup) * 0.7):
            for g in opt.param_groups:
                g["lr"] = args.lr / 4
        encoder.eval(); decoder.eval(); joiner.eval()
        errs = words = 0
        # While the CTC loss trains alone, the CTC head's greedy decode says how well the encoder
        # hears; the transducer's (what is exported) is scored once its loss has joined.
        decode = (lambda f: ctc_greedy(encoder, ctc_head, f)) if warmup else (lambda f: greedy(encoder, decoder, joiner, f))
        for text, f in heldout[:40]:
            hyp = " ".join(VOCAB[k - 1] for k in decode(f))
            e, n = wer(text, hyp)
            errs += e; words += n
        elapsed = (time.time() - t_start) / 60
        print(f"epoch {epoch + 1}{' (CTC alone)' if warmup else ''}: loss {total / len(batches):.3f}, held-out WER {errs / words:.3f} (40 utts, {'CTC head' if warmup else 'transducer'}), {elapsed:.1f} min", flush=True)
        if not warmup and errs / words <= best:
            best = errs / words
            best_state = [copy.deepcopy(m.state_dict()) for m in (encoder, decoder, joiner)]
        torch.save({"models": [m.state_dict() for m in (encoder, decoder, joiner, ctc_head)], "opt": opt.state_dict(),
                    "epoch": epoch + 1, "best": best, "best_state": best_state}, ckpt)
        if os.path.exists(os.path.join(args.cache, "STOP")):
            print("stop file found; stopping", flush=True)
            break
        if elapsed > args.max_minutes:
            print("time budget reached; stopping", flush=True)
            break

    # Keep the epoch that did best on the first 40 held-out utterances (all 120 are reported).
    if best_state is not None:
        for m, st in zip((encoder, decoder, joiner), best_state):
            m.load_state_dict(st)
    encoder.eval(); decoder.eval(); joiner.eval()
    errs = words = 0
    for text, f in heldout:
        hyp = " ".join(VOCAB[k - 1] for k in greedy(encoder, decoder, joiner, f))
        e, n = wer(text, hyp)
        errs += e; words += n
    print(f"final held-out WER (python greedy, {len(heldout)} utterances, unseen voice): {errs / words:.3f}", flush=True)

    export(encoder, decoder, joiner, args.out, V, args.joiner_dim)
    with open(os.path.join(args.out, "tokens.txt"), "w", encoding="utf-8") as fh:
        for i, t in enumerate(tokens):
            fh.write(f"{t} {i}\n")
    with open(os.path.join(args.out, "training.json"), "w") as fh:
        json.dump({
            "seed": args.seed, "train_utterances": args.train_utts, "epochs_run": epoch + 1,
            "ctc_warmup_epochs": args.ctc_warmup, "lr": args.lr, "minutes": round((time.time() - t_start) / 60, 1),
            "init": os.path.basename(args.init) if args.init else None,
            "heldout_utterances": len(heldout), "heldout_wer_python_greedy": round(errs / words, 4),
            "train_voices": TRAIN_VOICES, "train_variants": TRAIN_VARIANTS,
            "heldout_voices": HELDOUT_VOICES, "heldout_variants": HELDOUT_VARIANTS,
            "vocabulary": VOCAB, "torch": torch.__version__, "torchaudio": torchaudio.__version__,
        }, fh, indent=2)
        fh.write("\n")
    print(f"wrote {args.out}/encoder.onnx decoder.onnx joiner.onnx tokens.txt training.json", flush=True)


if __name__ == "__main__":
    main()
