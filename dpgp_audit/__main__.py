"""``python -m dpgp_audit`` runs the command line."""

from dpgp_audit.cli import main

raise SystemExit(main())
