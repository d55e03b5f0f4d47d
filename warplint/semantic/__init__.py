"""The semantic layer: what the linted code means to Warp, built once per project, bottom up.

    bindings.Bindings        the binder's tables over the file models (pure over them)
    kernels                  kernels made by project decorators, added to the models
    evaluator.Evaluator      the values an expression can have (built once, from the bindings)
    launches.IdentityFacts   kernel modules, launches, timelines (over a layer.Layer: bindings + evaluator)
    builds, generics, variants, differentiation, collect: facts over the identity facts

``warplint.index.Project`` builds it in that order and is the one door rules use. Each module imports
only modules below it (CONTRIBUTING.md, "The semantic layer"; tests/test_layer.py).
"""
