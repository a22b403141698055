"""Search by meaning, the optional stage beside the lexical index: the stage that embeds chunks in
the background (`stage`), the hook the index searches through (`hook`), the vectors kept beside the
index (`vectors`), what the model reads of a file (`chunk_texts`), how the model's ranking joins the
lexical one (`fusion`), and the models themselves (`models/`, unaware of a workspace or an index)."""
