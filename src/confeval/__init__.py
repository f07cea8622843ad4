"""confeval: can the confidence of an LLM, a VLM or an LLM/VLM judge be trusted?"""

__version__ = "0.1.0"
