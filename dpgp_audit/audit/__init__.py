"""dpgp_audit.audit"""
