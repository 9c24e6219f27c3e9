"""What a command did, as typed outcomes (:mod:`.kinds`, :mod:`.report`), and the one renderer of them (:mod:`.render`)."""
