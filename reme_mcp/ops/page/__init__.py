"""What the memory page reads, shaped for a person: the timeline of days, one note with its
versions and links, and search with each snippet out of the model's boundary. The page's faces
(`faces/view/`) render these; nothing here is part of the five tools."""
