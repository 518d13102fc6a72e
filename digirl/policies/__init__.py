"""Policies: the protocol, the default from-scratch CPU policy, scripted and random policies."""
