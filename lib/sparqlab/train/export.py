"""A fine-tuned model back to GGUF, so the real llama.cpp server (``sparqlab model serve FILE.gguf``) serves it at
llama.cpp's speed rather than the transformers server's (~6 tokens/s for SmolLM2-135M on 2 CPU cores).

The LoRA adapter is merged into its base (peft's ``merge_and_unload``) and the merged weights are written with the
``gguf`` package into a copy of the GGUF file the base was converted from (:mod:`sparqlab.train.convert`): every
metadata field of that file (architecture, tokenizer, chat template) is kept, every tensor replaced. Only the
Llama architecture is written (SmolLM2, Llama 3.x): its query and key projections are stored in llama.cpp's
rotary layout, which transformers undoes when it reads a GGUF file and this module redoes. llama.cpp's own
``convert_hf_to_gguf.py`` ships only inside llama-cpp-python's source archive, not as an installed module, so the
project does not depend on it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sparqlab.core.extras import require
from sparqlab.core.hashing import file_digest
from sparqlab.serving.llama_cpp import model_file
from sparqlab.train.convert import base_folder, source_of

TENSOR_TYPES = ("q8_0", "f16", "f32")
"""How the merged matrices are stored (norms stay float32): q8_0 (default: a quarter of float32's size, within
llama.cpp's rounding of the float weights), f16, f32."""


def export_gguf(base: str, adapter: str | Path | None, out: str | Path, *, tensor_type: str = "q8_0") -> Path:
    """Write ``base`` (a converted GGUF model: ``smollm2-135m``, ``FILE.gguf`` or its converted folder) with the
    LoRA ``adapter`` merged in (``None``: the base alone) to the GGUF file ``out``; returns its path.
    :class:`ValueError` for a base not converted from a GGUF file, another architecture than Llama or an unknown
    ``tensor_type`` (:data:`TENSOR_TYPES`)."""
    require("train", what="exporting a model to GGUF")
    if tensor_type not in TENSOR_TYPES:
        raise ValueError(f"tensor_type must be one of {', '.join(TENSOR_TYPES)}; got {tensor_type!r}")
    folder = base_folder(base)
    source = source_of(folder)
    if source is None:
        raise ValueError(f"{base} was not converted from a GGUF file (no sparqlab_source.json): GGUF export "
                         "copies "
                         "that file's tokenizer and metadata; use --base smollm2-135m or a FILE.gguf")
    import gguf

    path = model_file(source["model"])
    if file_digest(path) != source["gguf_sha256"]:
        raise ValueError(f"{path} changed since {folder} was converted from it (sha256 differs); convert it again")
    reader = gguf.GGUFReader(path)
    architecture = reader.fields["general.architecture"].contents()
    if architecture != "llama":
        raise ValueError(f"GGUF export writes the Llama architecture only; {source['gguf_file']} is "
                         f"{architecture}")
    weights = _merged_weights(folder, adapter)
    out = Path(out)
    partial = out.with_name(f".{out.name}.partial")
    writer = gguf.GGUFWriter(partial, arch=architecture)
    _copy_metadata(reader, writer, gguf)
    writer.add_file_type({"q8_0": gguf.LlamaFileType.MOSTLY_Q8_0, "f16": gguf.LlamaFileType.MOSTLY_F16,
                          "f32": gguf.LlamaFileType.ALL_F32}[tensor_type])
    heads = reader.fields["llama.attention.head_count"].contents()
    kv_heads = reader.fields["llama.attention.head_count_kv"].contents()
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, reader.fields["llama.block_count"].contents())
    by_name = {names.get_name(key, try_suffixes=(".weight", ".bias")): value for key, value in weights.items()}
    for tensor in reader.tensors:
        if tensor.name not in by_name:
            raise ValueError(f"the merged model has no weight for {tensor.name} of {source['gguf_file']}")
        data = by_name[tensor.name]
        if tensor.name.endswith("attn_q.weight"):
            data = _rotary_layout(data, heads)
        elif tensor.name.endswith("attn_k.weight"):
            data = _rotary_layout(data, kv_heads)
        _add_tensor(writer, tensor.name, data, tensor_type if tensor.tensor_type != gguf.GGMLQuantizationType.F32
                    else "f32", gguf)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    partial.rename(out)
    return out


def _merged_weights(folder: str, adapter: str | Path | None) -> dict[str, Any]:
    """The float32 numpy weights of the base folder with the adapter merged (peft's ``merge_and_unload``)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    if adapter is not None:
        from peft import PeftModel

        if not (Path(adapter) / "adapter_config.json").is_file():
            raise ValueError(f"{adapter} is not a LoRA adapter folder (no adapter_config.json)")
        model = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
    return {key: value.detach().float().numpy() for key, value in model.state_dict().items()}


def _rotary_layout(weight: Any, heads: int) -> Any:
    """transformers' query/key projection rows in llama.cpp's rotary order (the inverse of what transformers'
    GGUF reader applies): within each head, the two halves interleaved."""
    rows = weight.shape[0]
    return weight.reshape(heads, 2, rows // heads // 2, *weight.shape[1:]).swapaxes(1, 2).reshape(weight.shape)


def _add_tensor(writer: Any, name: str, data: Any, tensor_type: str, gguf: Any) -> None:
    import numpy as np

    if tensor_type == "f32":
        writer.add_tensor(name, np.ascontiguousarray(data, dtype=np.float32))
    elif tensor_type == "f16":
        writer.add_tensor(name, np.ascontiguousarray(data, dtype=np.float16))
    else:
        kind = gguf.GGMLQuantizationType.Q8_0
        writer.add_tensor(name, gguf.quants.quantize(np.ascontiguousarray(data, dtype=np.float32), kind),
                          raw_dtype=kind)


def _copy_metadata(reader: Any, writer: Any, gguf: Any) -> None:
    """Every key of the source file but the header's counts and what the writer sets itself."""
    skipped = {"general.architecture", "general.file_type"}
    for field in reader.fields.values():
        if field.name.startswith("GGUF.") or field.name in skipped:
            continue
        main = field.types[0]
        sub = field.types[-1] if main == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), main, sub_type=sub)

