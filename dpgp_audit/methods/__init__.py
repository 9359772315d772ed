"""dpgp_audit.methods"""
