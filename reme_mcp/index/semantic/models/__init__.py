"""The embedding models of the semantic stage: the bundled ones and those fetched from a hub,
their 8-bit graphs and tokenizers, how stored text and questions are read into centred unit
vectors, and how far the fusion trusts each model.

Below the index (index/semantic/stage.py keeps the vectors beside the full-text index and fuses the
two rankings); nothing here knows a workspace, and nothing here ever downloads.
"""
