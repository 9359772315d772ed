"""Notebook drivers (an edge: they may use every layer, nothing below imports them).

``s18``, ``s21``, ``honkela``, ``raisa`` (torch imported lazily) and ``auditing_lab``
run the papers' figures and the auditing lab at notebook scale.
"""
