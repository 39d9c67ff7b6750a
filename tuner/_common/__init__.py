"""The tuner's small private helpers, used by several rooms and by none of its users.

``attrs`` (the names of the study and trial attributes, in one place), ``seeding`` (one seed
flowing through everything: derived seeds, seeded fits), ``faults`` (faults of the machine: a
full disk, a read-only folder), ``quiet`` (third-party logging kept out of the terminal),
``lazy_exports`` (a room's exports imported on first use), ``figures`` (a figure, saved),
``progress`` (a bar on a terminal, a line every tenth in a log file), ``stopping`` (SIGTERM
ends a run as Ctrl-C does).
"""
