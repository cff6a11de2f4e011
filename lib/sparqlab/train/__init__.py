"""Fine-tuning inside the workbench: LoRA SFT of generators and correctors on instruction/response
records with the loss on the response only (:mod:`.sft`, :mod:`.records`), the GGC encoder gate with validation
metrics (:mod:`.gate`), training-data builders over the datasets and the GGC/DeSQ builders (:mod:`.data`), tiny
random models for offline pipeline checks (:mod:`.tiny`) and the corrector data-composition experiment
(:mod:`.experiments`, notebook 09). A trained adapter is served by ``sparqlab train serve`` (the
:mod:`sparqlab.llm.local_transformers` backend) or by vLLM with ``--enable-lora``.

Submodules import transformers/peft only inside functions, so importing them stays light.
"""
