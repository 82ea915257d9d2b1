"""Repair operators, replay executors and tool back-ends (the plugins of step 6).

``base`` holds the contracts; ``registry.load_registry`` assembles the built-ins and any
third-party plugins found through entry points.
"""
