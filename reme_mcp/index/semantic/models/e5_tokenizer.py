"""The bundled model's tokenizer: SentencePiece's own Unigram model over the file's vocabulary.

The way the model was trained: each word behind a "\u2581", split the likeliest way by the
pieces' scores, a run of unknown characters one unknown piece. Characters are normalized
and runs of spaces collapsed beforehand, by the table the model's file carries
(e5_embedder.py), so the model here normalizes nothing itself. The `sentencepiece` library
runs it (about 45 MB resident; Hugging Face's `tokenizers` took 258 MB for the same
vocabulary). Its model file is built once from the vocabulary and kept in the models
folder (model_cache.py): a start then never reads the quarter of a million pieces.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from reme_mcp.index.semantic.models import model_cache
from reme_mcp.index.semantic.models.e5_file import E5File

TOKENIZER_VERSION = "t1"
# SentencePiece's piece types (sentencepiece_model.proto): NORMAL 1, UNKNOWN 2, CONTROL 3.
_NORMAL, _UNKNOWN, _CONTROL = 1, 2, 3


def load(source: E5File, folder: Path) -> Any:
    """A SentencePieceProcessor for `source`'s vocabulary."""
    import sentencepiece

    def read(model: Path | bytes) -> Any:
        if isinstance(model, bytes):
            return sentencepiece.SentencePieceProcessor(model_proto=model)
        return sentencepiece.SentencePieceProcessor(model_file=str(model))

    name = f"e5-spm-{source.fingerprint}-{TOKENIZER_VERSION}.model"
    return model_cache.loaded(folder, name, lambda: _model(source), read)


def _model(source: E5File) -> bytes:
    model_pb: Any = importlib.import_module("sentencepiece.sentencepiece_model_pb2")
    vocabulary = source.vocabulary()
    proto = model_pb.ModelProto()
    proto.trainer_spec.model_type = model_pb.TrainerSpec.UNIGRAM
    proto.trainer_spec.unk_id = vocabulary.unk
    proto.trainer_spec.bos_id = vocabulary.bos
    proto.trainer_spec.eos_id = vocabulary.eos
    proto.trainer_spec.pad_id = vocabulary.pad
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.add_dummy_prefix = True
    proto.normalizer_spec.remove_extra_whitespaces = False
    proto.normalizer_spec.escape_whitespaces = True
    kinds = {vocabulary.bos: _CONTROL, vocabulary.eos: _CONTROL, vocabulary.pad: _CONTROL, vocabulary.unk: _UNKNOWN}
    pieces, scores = source.pieces()
    for i, (text, score) in enumerate(zip(pieces, scores, strict=True)):
        piece = proto.pieces.add()
        piece.piece, piece.score, piece.type = text, score, kinds.get(i, _NORMAL)
    return bytes(proto.SerializeToString())
