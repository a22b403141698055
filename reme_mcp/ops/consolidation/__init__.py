"""Consolidation by the host's model, the person in charge: clusters worth one note (`clusters`:
copies, chains of versions, a dialog and the note that restates it, small notes on one topic),
the prompt that hands the model one (`prompt`), and the list a person reads (`tidy`). Nothing
here deletes or edits a note: a consolidated note supersedes its cluster."""
