"""warplint --confirm in-process recorder.

This file is copied, unchanged, into a private temporary directory as ``sitecustomize.py`` and that
directory is put first on ``PYTHONPATH`` of the confirmed command. It must therefore depend on the
standard library only (the program may run in an environment without warplint) and it must never
change what the program does: every hook calls the original first-class and records in ``try/except``.

What it does:

1. chains to the ``sitecustomize`` that would have been imported without it;
2. installs a ``sys.meta_path`` finder that waits for ``import warp`` to finish and then wraps
   ``Module.__init__``, ``Module.load``, ``Module._compile``, ``Kernel.__init__``,
   ``Kernel._add_normalized_overload``, ``set_module_options``, ``clear_kernel_cache``/``clear_lto_cache``
   and ``warp.config`` assignments (``_ConfigModule.__setattr__``);
3. optionally watches a few source lines (the lines of the static findings) to tell "did not run"
   from "ran, nothing moved": ``sys.monitoring`` on 3.12+; a narrowly scoped ``sys.settrace`` before
   3.12 only on request (it costs every Python call a callback);
4. appends one JSON object per event to the file named by ``WARPLINT_CONFIRM_EVENTS``.

Environment: ``WARPLINT_CONFIRM_EVENTS`` (required, else the recorder is inert),
``WARPLINT_CONFIRM_LINES`` (optional JSON file ``{path: [line, ...]}``), ``WARPLINT_CONFIRM_PROBES``
(``auto``: sys.monitoring on 3.12+, none before; ``on``: also settrace before 3.12; ``off``), ``WARPLINT_CONFIRM_RUN``
(a label such as ``cold``/``warm``), ``WARPLINT_CONFIRM_SKIP`` (extra directories whose frames are not
user code, ``os.pathsep`` separated).
"""

import os
import sys

TYPE_CHECKING = False  # typing's flag, without importing typing into every confirmed program
if TYPE_CHECKING:
    from types import FrameType
    from typing import Literal

_EVENTS_PATH = os.environ.get("WARPLINT_CONFIRM_EVENTS")
_HERE = os.path.dirname(os.path.abspath(__file__))

MAX_SHAPES = 32  # distinct launch shapes recorded per (kernel, module executable); the rest share one entry
SNAPSHOT_OPTIONS = (
    "enable_backward",
    "max_unroll",
    "lineinfo",
    "deterministic",
    "deterministic_max_records",
    "compile_time_trace",
)


def _stand_in(wrapper, orig):
    """Mark ``wrapper`` as standing in for ``orig``: ``__wrapped__``, as functools.wraps sets it (nothing else)."""
    wrapper.__wrapped__ = orig
    return wrapper


def _chain_sitecustomize():
    """Import the sitecustomize that Python would have found without our directory first."""
    import importlib.machinery
    import importlib.util

    ours = sys.modules.get("sitecustomize")
    here = _HERE
    paths = []
    for p in sys.path:
        try:
            if os.path.abspath(p or os.curdir) == here:
                continue
        except Exception:
            pass
        paths.append(p)
    # our directory is only a vehicle: take it off sys.path so the program sees its usual path
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    except Exception:
        pass
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", paths)
    if spec is None or spec.loader is None:
        return
    mod = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        # the user's sitecustomize failing is the user's business, as it would be without us
        if ours is not None:
            sys.modules["sitecustomize"] = ours
        raise


class _Recorder:
    def __init__(self, path):
        import threading
        import time

        self.path = path
        self.lock = threading.Lock()
        self.tl = threading.local()
        self.perf = time.perf_counter
        self.t0 = time.perf_counter()
        self.seq = 0
        self.fh = None
        self.pid = os.getpid()
        self.ok = True
        self.warp_dir = None
        skip = [_HERE]
        for p in (os.environ.get("WARPLINT_CONFIRM_SKIP") or "").split(os.pathsep):
            if p:
                skip.append(os.path.abspath(p))
        self.skip_dirs = tuple(d.rstrip(os.sep) + os.sep for d in skip)
        self.this_file = os.path.abspath(__file__)
        self.launch_sites = set()
        self.seen_execs = set()  # id(ModuleExec) recorded (ModuleExec objects stay in Module.execs)
        self.last_hash = {}  # (module id, device, block_dim) -> hash hex
        self.last_state = {}  # (module id, device, block_dim) -> (kernel content hashes, resolved options)
        self.topology = {}  # launch key -> [count, taped count]
        self.whatif = _read_whatif()

    # -- output -----------------------------------------------------------------------------
    def emit(self, ev, **data):
        try:
            import json

            with self.lock:
                if self.fh is None or self.pid != os.getpid():
                    self.pid = os.getpid()
                    # line-buffered and kept open for the life of the process (a forked child reopens it)
                    self.fh = open(self.path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - kept open
                self.seq += 1
                data["ev"] = ev
                data["seq"] = self.seq
                data["pid"] = self.pid
                data["t"] = round(self.perf() - self.t0, 6)
                self.fh.write(json.dumps(data, default=repr) + "\n")
        except Exception:
            self.ok = False

    def fail(self, where, exc):
        self.ok = False
        try:
            self.emit("recorder_error", where=where, error=f"{type(exc).__name__}: {exc}"[:300])
        except Exception:
            pass

    # -- frames -----------------------------------------------------------------------------
    def is_internal(self, filename):
        if not filename or filename.startswith("<"):
            return True
        if self.warp_dir is not None and filename.startswith(self.warp_dir):
            return True
        return filename == self.this_file or filename.startswith(self.skip_dirs)

    def user_site(self, depth=2):
        try:
            f: FrameType | None = sys._getframe(depth)
        except ValueError:
            return None
        while f is not None:
            fn = f.f_code.co_filename
            if not self.is_internal(fn):
                return [fn, f.f_lineno]
            f = f.f_back
        return None

    # -- warp hooks -------------------------------------------------------------------------
    def install_warp(self, warp):
        errors = []
        try:
            self.warp_dir = os.path.dirname(os.path.abspath(warp.__file__)) + os.sep
        except Exception as e:
            errors.append(f"warp_dir: {e}")
        ctx = None
        try:
            ctx = warp._src.context
        except Exception as e:
            errors.append(f"context: {e}")
        hooks = []
        applied = self._apply_whatif_config(warp, errors)
        if ctx is not None:
            for name, fn in (
                ("Module.__init__", self._hook_module_init),
                ("Module.load", self._hook_load),
                ("Module._compile", self._hook_compile),
                ("Module._run_codegen", self._hook_codegen),
                ("build", self._hook_build),
                ("launch", self._hook_launch),
                ("Kernel.__init__", self._hook_kernel_init),
                ("Kernel._add_normalized_overload", self._hook_overload),
                ("set_module_options", self._hook_set_module_options),
                ("clear_caches", self._hook_clear_caches),
                ("config", self._hook_config),
            ):
                try:
                    fn(warp, ctx)
                    hooks.append(name)
                except Exception as e:
                    errors.append(f"{name}: {type(e).__name__}: {e}")
        if errors:
            self.ok = False
        cfg = {}
        try:
            for k in (*SNAPSHOT_OPTIONS, "cache_kernels", "kernel_cache_dir", "mode", "log_level"):
                cfg[k] = repr(getattr(warp.config, k, None))
        except Exception:
            pass
        option_keys = None
        try:
            for m in list(ctx.user_modules.values())[:1] if ctx is not None else ():
                option_keys = sorted(m.options)
        except Exception:
            pass
        self.emit(
            "warp",
            option_keys=option_keys,
            version=getattr(warp, "__version__", None) or getattr(getattr(warp, "config", None), "version", None),
            hooks=hooks,
            errors=errors,
            config=cfg,
            whatif=applied,
            site=self.user_site(2),
        )
        try:
            import atexit

            atexit.register(self._emit_topology_counts)
        except Exception:
            pass

    def _apply_whatif_config(self, warp, errors):
        """Set the what-if ``wp.config`` values right after ``import warp``, before the program's own
        modules exist (so the snapshot options reach them), and before the config hook records user
        assignments."""
        applied = {}
        for name, value in (self.whatif.get("config") or {}).items():
            try:
                setattr(warp.config, name, value)
                applied[name] = repr(value)
            except Exception as e:
                errors.append(f"what-if config {name}: {e}")
        return applied or None

    def _emit_topology_counts(self):
        try:
            self.emit("topology_counts", counts=[[i, c[0], c[1]] for i, c in enumerate(self.topology.values())])
        except Exception:
            pass

    def _config_snapshot(self, warp):
        out = {}
        cfg = warp.config
        for k in SNAPSHOT_OPTIONS:
            out[k] = repr(getattr(cfg, k, None))
        return out

    def _hook_module_init(self, warp, ctx):
        Module = ctx.Module
        orig = Module.__init__
        rec = self

        def __init__(self, *args, **kwargs):
            orig(self, *args, **kwargs)
            try:
                rec.emit(
                    "module",
                    module=self.name,
                    mid=id(self),
                    options={k: repr(self.options.get(k)) for k in SNAPSHOT_OPTIONS},
                    site=rec.user_site(2),
                )
            except Exception as e:
                rec.fail("module", e)

        _stand_in(__init__, orig)
        Module.__init__ = __init__

    def _hook_compile(self, warp, ctx):
        Module = ctx.Module
        orig = Module._compile
        rec = self

        def _compile(self, *args, **kwargs):
            t = rec.perf()
            outer = getattr(rec.tl, "phases", None)
            phases = rec.tl.phases = _new_phases()
            try:
                r = orig(self, *args, **kwargs)
            finally:
                rec.tl.phases = outer
            try:
                rec.tl.compile = (bool(r), (rec.perf() - t) * 1000.0, phases)
            except Exception:
                pass
            return r

        _stand_in(_compile, orig)
        Module._compile = _compile

    def _hook_codegen(self, warp, ctx):
        Module = ctx.Module
        orig = Module._run_codegen
        rec = self

        def _run_codegen(self, *args, **kwargs):
            ph = getattr(rec.tl, "phases", None)
            lto_before = ph["lto_ms"] if ph is not None else 0.0
            t = rec.perf()
            r = orig(self, *args, **kwargs)
            try:
                if ph is not None:  # codegen without the LTOs it built (those count as LTO time)
                    ph["codegen_ms"] += (rec.perf() - t) * 1000.0 - (ph["lto_ms"] - lto_before)
                    ph["source_bytes"] = len(r[0])
            except Exception:
                pass
            return r

        _stand_in(_run_codegen, orig)
        Module._run_codegen = _run_codegen

    def _hook_build(self, warp, ctx):
        """Time the native compiler (``build_cpu``/``build_cuda``) and every LTO Warp builds or fetches
        (``_build_lto_base``: MathDx GEMM/FFT/solver LTOs, built during codegen on CUDA)."""
        build = warp._src.build
        rec = self
        for fname in ("build_cpu", "build_cuda"):
            orig = getattr(build, fname)

            def make(orig):
                def native(*args, **kwargs):
                    t = rec.perf()
                    try:
                        return orig(*args, **kwargs)
                    finally:
                        ph = getattr(rec.tl, "phases", None)
                        if ph is not None:
                            ph["native_ms"] += (rec.perf() - t) * 1000.0

                return _stand_in(native, orig)

            setattr(build, fname, make(orig))
        orig_lto = build._build_lto_base

        def _build_lto_base(lto_symbol, compile_func, builder, extra_files=None):
            built = []

            def timed_compile(paths):
                t0 = rec.perf()
                try:
                    return compile_func(paths)
                finally:
                    built.append((rec.perf() - t0) * 1000.0)

            t = rec.perf()
            r = orig_lto(lto_symbol, timed_compile, builder, extra_files)
            try:
                ms = (rec.perf() - t) * 1000.0
                ph = getattr(rec.tl, "phases", None)
                if ph is not None:
                    ph["lto_ms"] += ms
                    ph["lto_built" if built else "lto_cached"] += 1
                import hashlib

                module = getattr(getattr(builder, "module", None), "name", None)
                rec.emit(
                    "lto",
                    call=_codegen_line(warp),
                    key=hashlib.sha256(str(lto_symbol).encode()).hexdigest()[:16],
                    symbol=str(lto_symbol)[:120],
                    module=module,
                    built=bool(built),
                    ms=round(ms, 3),
                    build_ms=round(sum(built), 3),
                    ok=bool(r[0]) if isinstance(r, tuple) and r else None,
                )
            except Exception as e:
                rec.fail("lto", e)
            return r

        _stand_in(_build_lto_base, orig_lto)
        build._build_lto_base = _build_lto_base

    def _hook_launch(self, warp, ctx):
        """Record the launch topology: each distinct (kernel, module, dim, argument dtypes, device,
        block_dim, adjoint) once, with counts at exit, and whether a ``wp.Tape`` recorded it."""
        import inspect

        orig = ctx.launch
        rec = self
        names = list(inspect.signature(orig).parameters)[2:]
        topology = self.topology
        shapes: dict = {}  # (kernel's key and module, exec) -> distinct launch shapes recorded
        tl = self.tl
        runtime = ctx

        def launch(kernel, dim, *args, **kwargs):
            tl.exec = None
            r = orig(kernel, dim, *args, **kwargs)
            try:
                if args:
                    kw = dict(zip(names, args, strict=False))
                    kw.update(kwargs)
                else:
                    kw = kwargs
                ex = tl.exec
                adjoint = bool(kw.get("adjoint"))
                taped = runtime.runtime.tape is not None and kw.get("record_tape", True)
                inputs = kw.get("inputs")
                outputs = kw.get("outputs")
                # the kernel by its key and module, not the object: Warp's module hash reads the live objects of
                # a key, so holding a kernel the program dropped would build modules the plain run does not
                kernel_id = (getattr(kernel, "key", None), id(getattr(kernel, "module", None)))
                key = (kernel_id, dim if type(dim) is int else _dims(dim), ex, adjoint,
                       tuple([getattr(a, "dtype", None) or type(a) for a in inputs]) if inputs else (),
                       tuple([getattr(a, "dtype", None) or type(a) for a in outputs]) if outputs else ())
                entry = topology.get(key)
                if entry is None:
                    per = (kernel_id, ex)
                    if shapes.get(per, 0) >= MAX_SHAPES:
                        # dims or dtypes that vary launch after launch: one entry for the rest, counted
                        key = (kernel_id, "varies", ex, adjoint, ("varies",), ())
                        entry = topology.get(key)
                    if entry is None:
                        shapes[per] = shapes.get(per, 0) + 1
                        entry = topology[key] = [0, 0]
                        rec._topology_entry(kernel, key, ex, kw)
                entry[0] += 1
                if taped:
                    entry[1] += 1
            except Exception as e:
                rec.fail("launch_topology", e)
            return r

        _stand_in(launch, orig)
        launch.__doc__ = orig.__doc__
        launch.__name__ = orig.__name__
        ctx.launch = launch
        if getattr(warp, "launch", None) is orig:
            warp.launch = launch

    def _topology_entry(self, kernel, key, ex, kw):
        def tname(t):
            return getattr(t, "__name__", None) or repr(t)

        module = getattr(getattr(kernel, "module", None), "name", None)
        varies = key[1] == "varies"
        self.emit(
            "topology",
            index=len(self.topology) - 1,
            kernel=getattr(kernel, "key", repr(kernel)),
            module=module,
            dim=list(key[1]) if isinstance(key[1], tuple) else key[1],
            varies=varies,
            device=str(ex.device) if ex is not None else str(kw.get("device")),
            block_dim=getattr(ex, "block_dim", None),
            adjoint=key[3],
            inputs=[tname(t) for t in key[4]],
            outputs=[tname(t) for t in key[5]],
            site=self.user_site(3),
        )

    def _hook_load(self, warp, ctx):
        Module = ctx.Module
        orig = Module.load
        rec = self
        perf = self.perf
        getframe = sys._getframe
        seen = self.seen_execs
        sites = self.launch_sites

        pending = rec.whatif_pending(ctx)

        def load(self, device, block_dim=None, *args, **kwargs):
            if pending:
                rec.whatif_before_load(ctx, self, device, pending)
            rec.tl.compile = None
            t = perf()
            try:
                r = orig(self, device, block_dim, *args, **kwargs)
            except BaseException as exc:
                rec._load_error(self, device, block_dim, (perf() - t) * 1000.0, exc)
                raise
            if r is None:
                return r
            rec.tl.exec = r
            if id(r) not in seen:
                rec._load_done(self, r, (perf() - t) * 1000.0, args, kwargs)
            else:
                # a launch on an executable already recorded: remember each user launch site once
                try:
                    f: FrameType | None = getframe(1)
                    wd = rec.warp_dir
                    own = rec.this_file  # the launch hook's frame sits between wp.launch and its caller
                    while f is not None and wd is not None and (
                        f.f_code.co_filename.startswith(wd) or f.f_code.co_filename == own
                    ):
                        f = f.f_back
                    if f is not None:
                        key = (f.f_code, f.f_lineno, id(r))
                        if key not in sites:
                            sites.add(key)
                            rec._launch(self, r, f)
                except Exception as e:
                    rec.fail("launch", e)
            return r

        _stand_in(load, orig)
        Module.load = load

    def whatif_pending(self, ctx):
        """What the load hook still has to do for a what-if: module options and the preload."""
        pending: dict = {}
        if self.whatif.get("module_options"):
            pending["module_options"] = dict(self.whatif["module_options"])
        if self.whatif.get("preload"):
            pending["preload"] = list(self.whatif["preload"])
        return pending

    def whatif_before_load(self, ctx, module, device, pending):
        mo = pending.get("module_options")
        if mo and module.name in mo:
            opts = mo.pop(module.name)
            try:
                module.options.update(opts)
                module.mark_modified()
                self.emit("whatif", action="module_options", module=module.name,
                          options={k: repr(v) for k, v in opts.items()})
            except Exception as e:
                self.fail("whatif module_options", e)
            if not mo:
                pending.pop("module_options", None)
        plan = pending.get("preload")
        if plan and not module.name.startswith("warp.") and not getattr(self.tl, "preloading", False):
            pending.pop("preload", None)
            self.tl.preloading = True
            try:
                self._preload(ctx, plan)
            finally:
                self.tl.preloading = False

    def _preload(self, ctx, plan):
        """The parallel-preload what-if: at the first load of a user module, build every module the
        baseline built that exists by now, at the block_dims it was launched with, in one
        ``force_load`` per (device, block_dim) with a thread per module."""
        from concurrent.futures import ThreadPoolExecutor

        work = []
        missing = []
        for item in plan:
            m = ctx.user_modules.get(item["module"])
            if m is None:
                missing.append(item["module"])
                continue
            work.append((m, item["device"], item["block_dim"]))
        t = self.perf()
        workers = int(self.whatif.get("preload_workers") or 8)

        def one(job):
            # one (module, block_dim) per task, all at once; force_load keeps each thread's CUDA context
            m, dev, bd = job
            ctx.force_load(device=dev, modules=[m], block_dim=bd, max_workers=0)

        with ThreadPoolExecutor(max_workers=max(1, min(workers, len(work) or 1))) as pool:
            for f in [pool.submit(one, job) for job in work]:
                try:
                    f.result()
                except Exception as e:
                    self.fail("whatif preload", e)
        self.emit("whatif", action="preload", modules=sorted({m.name for m, _, _ in work}),
                  missing=sorted(set(missing)), ms=round((self.perf() - t) * 1000.0, 3))

    def _launch(self, module, r, f):
        fn = f.f_code.co_filename
        site = [fn, f.f_lineno] if not self.is_internal(fn) else None
        self.emit(
            "launch",
            module=module.name,
            mid=id(module),
            device=str(r.device),
            block_dim=r.block_dim,
            hash=r.module_hash.hex() if r.module_hash else None,
            site=site,
        )

    def _kernel_sites(self, module):
        out = []
        try:
            for k in list(module._live_kernels)[:200]:
                func = getattr(k, "func", None)
                code = getattr(func, "__code__", None)
                if code is not None:
                    # qualname (a factory's kernel has "<locals>" in it) and the Python module the function
                    # lives in (Warp's default module for a kernel): where an option call for it must go
                    out.append([code.co_filename, code.co_firstlineno, k.key,
                                getattr(func, "__qualname__", None), getattr(func, "__module__", None)])
        except Exception:
            pass
        return out

    def _load_done(self, module, r, ms, args, kwargs):
        try:
            self.seen_execs.add(id(r))
            comp = getattr(self.tl, "compile", None)
            self.tl.compile = None
            phases = None
            if comp is None:
                status, compile_ms = "cached", None
            else:
                status = "compiled" if comp[0] else "cached"
                compile_ms = round(comp[1], 3)
                phases = {k: round(v, 3) if isinstance(v, float) else v for k, v in comp[2].items()}
            h = r.module_hash.hex() if r.module_hash else None
            bd = r.block_dim
            dev = str(r.device)
            key = (id(module), dev, bd)
            prev = self.last_hash.get(key)
            self.last_hash[key] = h
            opts = module.resolved_options.get(bd) or module.options
            # what changed since this module's previous load of the same variant: kernels (by content
            # hash) that are new, and resolved options whose value differs. These are the real causes.
            new_kernels, changed_options = None, None
            try:
                uk = module.hashers[bd].unique_kernels
                cur_k = {kh.hex(): k for kh, k in uk.items()}
                cur_o = {k: repr(v) for k, v in opts.items()}
                before = self.last_state.get(key)
                if before is not None:
                    new_kernels = []
                    for kh, k in cur_k.items():
                        if kh not in before[0]:
                            code = getattr(getattr(k, "func", None), "__code__", None)
                            new_kernels.append(
                                [getattr(code, "co_filename", None), getattr(code, "co_firstlineno", None), k.key,
                                 getattr(k, "sig", "") or ""]
                            )
                    changed_options = {
                        o: [before[1].get(o), v] for o, v in cur_o.items() if before[1].get(o) != v
                    }
                self.last_state[key] = (set(cur_k), cur_o)
            except Exception:
                pass
            try:
                import warp

                cfg = self._config_snapshot(warp)
            except Exception:
                cfg = {}
            # the first user frame above Module.load: the launch / load call that triggered the build
            self.emit(
                "load",
                module=module.name,
                mid=id(module),
                hash=h,
                device=dev,
                block_dim=bd,
                status=status,
                ms=round(ms, 3),
                compile_ms=compile_ms,
                phases=phases,
                ident=_identifier(module, bd),
                enable_backward=repr(opts.get("enable_backward")),
                references=sorted({getattr(m, "name", "?") for m in getattr(module, "references", ()) or ()}),
                prev_hash=prev,
                new_kernels=new_kernels,
                changed_options=changed_options,
                options={k: repr(opts.get(k)) for k in SNAPSHOT_OPTIONS},
                config=cfg,
                kernels=self._kernel_sites(module),
                site=self.user_site(3),
                test=os.environ.get("PYTEST_CURRENT_TEST"),  # "nodeid (setup|call|teardown)" under pytest
            )
        except Exception as e:
            self.fail("load", e)

    def _load_error(self, module, device, block_dim, ms, exc):
        try:
            bd = block_dim if block_dim is not None else module.options.get("block_dim")
            h = None
            try:
                hasher = module.hashers.get(bd)
                if hasher is not None:
                    h = hasher.get_hash().hex()
            except Exception:
                pass
            self.emit(
                "load",
                module=module.name,
                mid=id(module),
                hash=h,
                device=str(device),
                block_dim=bd,
                status="error",
                ms=round(ms, 3),
                compile_ms=None,
                prev_hash=None,
                error=f"{type(exc).__name__}: {exc}"[:300],
                kernels=self._kernel_sites(module),
                site=self.user_site(3),
            )
        except Exception as e:
            self.fail("load_error", e)

    def _hook_kernel_init(self, warp, ctx):
        Kernel = ctx.Kernel
        orig = Kernel.__init__
        rec = self

        merge = list(rec.whatif.get("merge_modules") or ())

        def __init__(self, *args, **kwargs):
            if len(merge) > 1:
                args, kwargs = rec._merged(ctx, merge, args, kwargs)
            orig(self, *args, **kwargs)
            try:
                m = self.module
                code = getattr(getattr(self, "func", None), "__code__", None)
                d = None
                if code is not None:
                    last = code.co_firstlineno
                    try:
                        for _, _, ln in code.co_lines():
                            if ln is not None and ln > last:
                                last = ln
                    except Exception:
                        pass
                    d = [code.co_filename, code.co_firstlineno, last]
                execs = getattr(m, "execs", None) or {}
                rec.emit(
                    "kernel",
                    key=self.key,
                    func=getattr(getattr(self, "func", None), "__qualname__", None),
                    define=d,
                    module=getattr(m, "name", None),
                    mid=id(m),
                    module_loaded=bool(execs),
                    loaded_hashes=sorted({e.module_hash.hex() for e in execs.values() if e.module_hash}),
                    generic=bool(self.is_generic),
                    # the kernel's own option, which overrides its module's for its adjoint (None: follows it)
                    enable_backward=_own_option(self, "enable_backward"),
                    site=rec.user_site(2),
                )
            except Exception as e:
                rec.fail("kernel", e)

        _stand_in(__init__, orig)
        Kernel.__init__ = __init__

    def _merged(self, ctx, merge, args, kwargs):
        """What-if merge-modules: a kernel of one of the modules ``merge[1:]`` joins module ``merge[0]``."""
        try:
            func = args[0] if args else kwargs.get("func")
            module = args[2] if len(args) > 2 else kwargs.get("module")
            name = getattr(module, "name", None) if module is not None else getattr(func, "__module__", None)
            if name in merge[1:]:
                target = ctx.get_module(merge[0])
                if len(args) > 2:
                    args = (*args[:2], target, *args[3:])
                else:
                    kwargs = dict(kwargs, module=target)
                self.emit("whatif", action="merge_modules", module=name, into=merge[0])
        except Exception as e:
            self.fail("merge_modules", e)
        return args, kwargs

    def _hook_overload(self, warp, ctx):
        Kernel = ctx.Kernel
        orig = Kernel._add_normalized_overload
        rec = self

        def _add_normalized_overload(self, arg_types):
            n = len(self.overloads)
            r = orig(self, arg_types)
            if len(self.overloads) != n:
                try:
                    m = self.module
                    rec.emit(
                        "overload",
                        key=self.key,
                        sig=getattr(r, "sig", None),
                        module=m.name,
                        mid=id(m),
                        module_loaded=bool(m.execs),
                        site=rec.user_site(2),
                    )
                except Exception as e:
                    rec.fail("overload", e)
            return r

        _stand_in(_add_normalized_overload, orig)
        Kernel._add_normalized_overload = _add_normalized_overload

    def _hook_set_module_options(self, warp, ctx):
        orig = ctx.set_module_options
        rec = self
        Module = ctx.Module
        from collections.abc import Mapping

        def set_module_options(options, module=None):
            if module is None:
                # the original resolves the module from the frame that called it; we are in between
                try:
                    module = ctx._get_caller_module_name(stack_level=2)
                except Exception:
                    module = sys._getframe(1).f_globals.get("__name__")
            pre = None
            try:
                if isinstance(module, Module):
                    m0 = module
                else:
                    name = module if isinstance(module, str) else getattr(module, "__name__", None)
                    m0 = ctx.user_modules.get(name)
                if m0 is not None and isinstance(options, Mapping):
                    pre = {k: repr(m0.options.get(k)) for k in options}
                loaded = bool(m0.execs) if m0 is not None else False
                existed = m0 is not None
            except Exception:
                loaded, existed = None, None
            r = orig(options, module)
            try:
                if isinstance(module, Module):
                    m = module
                else:
                    name = module if isinstance(module, str) else getattr(module, "__name__", None)
                    m = ctx.user_modules.get(name)
                new = {}
                if isinstance(options, Mapping) and m is not None:
                    new = {k: repr(m.options.get(k)) for k in options}
                changed = {}
                if pre is not None:
                    changed = {k: [pre[k], new.get(k)] for k in new if pre.get(k) != new.get(k)}
                rec.emit(
                    "set_options",
                    module=getattr(m, "name", None),
                    mid=id(m) if m is not None else None,
                    options=new,
                    changed=changed if pre is not None else None,
                    module_existed=existed,
                    module_loaded=loaded,
                    module_kernels=len(getattr(m, "_live_kernels", ()) or ()) if m is not None else None,
                    site=rec.user_site(2),
                )
            except Exception as e:
                rec.fail("set_options", e)
            return r

        _stand_in(set_module_options, orig)
        set_module_options.__doc__ = orig.__doc__
        set_module_options.__name__ = orig.__name__
        ctx.set_module_options = set_module_options
        if getattr(warp, "set_module_options", None) is orig:
            warp.set_module_options = set_module_options

    def _hook_clear_caches(self, warp, ctx):
        build = warp._src.build
        rec = self
        for fname in ("clear_kernel_cache", "clear_lto_cache"):
            orig = getattr(build, fname, None)
            if orig is None:
                continue

            def make(orig, fname):
                def wrapper(*args, **kwargs):
                    noop = fname in (rec.whatif.get("noop_clears") or ())
                    try:
                        rec.emit("clear_cache", fn=fname, site=rec.user_site(2), noop=noop)
                    except Exception:
                        pass
                    if noop:  # the no-clear-cache what-if: the call does nothing
                        return None
                    return orig(*args, **kwargs)

                _stand_in(wrapper, orig)
                wrapper.__doc__ = orig.__doc__
                wrapper.__name__ = orig.__name__
                return wrapper

            w = make(orig, fname)
            setattr(build, fname, w)
            if getattr(warp, fname, None) is orig:
                setattr(warp, fname, w)

    def _hook_config(self, warp, ctx):
        import types

        cfg = warp.config
        cls = type(cfg)
        if cls is types.ModuleType or not issubclass(cls, types.ModuleType):
            raise RuntimeError("warp.config has no _ConfigModule class to hook")
        orig = cls.__setattr__
        rec = self
        known = set(vars(cfg))

        def __setattr__(self, name, value):
            d = self.__dict__
            existed = name in d
            old = d.get(name)
            orig(self, name, value)
            try:
                try:
                    caller = sys._getframe(1).f_code.co_filename
                except Exception:
                    caller = ""
                internal = rec.is_internal(caller) and caller != "" and not caller.startswith("<")
                mods = None
                if name in SNAPSHOT_OPTIONS:
                    mods = {}
                    for mname, m in list(ctx.user_modules.items()):
                        if mname.startswith("warp.") or mname == "warp":
                            continue
                        mods[mname] = repr(m.options.get(name))
                rec.emit(
                    "config",
                    name=name,
                    value=repr(value)[:200],
                    old=repr(old)[:200] if existed else None,
                    existed=existed,
                    known=name in known,
                    internal=internal,
                    modules_before=mods,
                    site=rec.user_site(2),
                )
            except Exception as e:
                rec.fail("config", e)

        _stand_in(__setattr__, orig)
        cls.__setattr__ = __setattr__  # type: ignore[method-assign]  # the hook itself: warp's _ConfigModule


def _codegen_line(warp):
    """The user line Warp's code generation is at (the innermost ``Adjoint`` on the stack: the kernel or
    wp.func whose call needs this LTO), as Warp itself reports it in its error messages."""
    try:
        adjoint = warp._src.codegen.Adjoint
        f: FrameType | None = sys._getframe(1)
        while f is not None:
            for v in f.f_locals.values():
                if isinstance(v, adjoint) and getattr(v, "lineno", None) is not None and v.fun_lineno:
                    return [v.filename, int(v.lineno) + int(v.fun_lineno)]
            f = f.f_back
    except Exception:
        pass
    return None


def _own_option(kernel, name):
    """A kernel's own option (``@wp.kernel(enable_backward=...)``) as text, None when it has none."""
    options = getattr(kernel, "options", None) or {}
    return str(options[name]) if name in options else None


def _dims(dim):
    """A launch dim as plain ints (a tuple for a sequence): numpy integers and lists hash and print alike."""
    try:
        return tuple(int(d) for d in dim)
    except TypeError:
        return int(dim)


def _new_phases():
    return {"codegen_ms": 0.0, "native_ms": 0.0, "lto_ms": 0.0, "lto_built": 0, "lto_cached": 0, "source_bytes": None}


def _identifier(module, block_dim):
    """The module's cache directory name for this variant (``wp_<name>_<hash7>``), where its source lies."""
    try:
        return module.get_module_identifier(block_dim)
    except Exception:
        return None


def _read_whatif():
    """The what-if the harness asked for (``WARPLINT_CONFIRM_WHATIF``: a JSON file), or {}."""
    path = os.environ.get("WARPLINT_CONFIRM_WHATIF")
    if not path:
        return {}
    try:
        import json

        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except Exception:
        return {}


class _WarpFinder:
    """Meta-path finder that lets ``import warp`` run normally and hooks it right after."""

    def __init__(self, rec):
        self.rec = rec
        self.busy = False

    def find_spec(self, name, path=None, target=None):
        if name != "warp" or self.busy:
            return None
        import importlib.util

        self.busy = True
        try:
            spec = importlib.util.find_spec(name)
        except Exception:
            return None
        finally:
            self.busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        loader = spec.loader
        orig_exec = loader.exec_module
        rec = self.rec
        finder = self

        def exec_module(module):
            orig_exec(module)
            try:
                if finder in sys.meta_path:
                    sys.meta_path.remove(finder)
                rec.install_warp(module)
            except Exception as e:
                rec.fail("install", e)

        try:
            loader.exec_module = exec_module  # type: ignore[method-assign]  # on this one loader instance
        except Exception:
            return None
        return spec


def _install_line_probes(rec, lines_file):
    import json

    with open(lines_file, encoding="utf-8") as fh:
        raw = json.load(fh)
    pending = {}
    for path, lines in raw.items():
        s = {int(x) for x in lines}
        if s:
            pending[os.path.normcase(os.path.abspath(path))] = s
    if not pending:
        return "none"
    norm: dict[str, set[int]] = {}

    def target_lines(filename):
        r = norm.get(filename)
        if r is None:
            r = pending.get(os.path.normcase(os.path.abspath(filename)), set())
            norm[filename] = r
        return r

    def hit(filename, line):
        s = target_lines(filename)
        if line in s:
            s.discard(line)
            rec.emit("line", file=filename, line=line)
            return True
        return False

    mode = (os.environ.get("WARPLINT_CONFIRM_PROBES") or "auto").lower()
    if mode == "off":
        return "off"
    mon = getattr(sys, "monitoring", None)
    if mon is not None:
        tool = None
        for tid in (4, 3, 2, 1):  # prefer ids that profilers/debuggers/coverage do not use by default
            try:
                if mon.get_tool(tid) is None:
                    mon.use_tool_id(tid, "warplint-confirm")
                    tool = tid
                    break
            except Exception:
                continue
        if tool is None:
            return "unavailable"
        E = mon.events
        DISABLE = mon.DISABLE

        def on_start(code, offset):
            try:
                if target_lines(code.co_filename):
                    mon.set_local_events(tool, code, E.LINE)
            except Exception:
                pass
            return DISABLE

        def on_line(code, line):
            try:
                hit(code.co_filename, line)
            except Exception:
                pass
            return DISABLE

        mon.register_callback(tool, E.PY_START, on_start)
        mon.register_callback(tool, E.LINE, on_line)
        mon.set_events(tool, E.PY_START)
        return "sys.monitoring"

    # Python < 3.12: a global trace function that only traces frames of code objects whose line range
    # contains a line not yet seen; everything else returns None at the call event. Even so, every
    # Python call pays a trace callback (measured: +28 % on a launch-bound loop), so this path runs
    # only when asked for (WARPLINT_CONFIRM_PROBES=on); by default the Warp events alone decide.
    if mode != "on":
        return "events-only"
    import threading

    code_cache: dict[object, tuple[set[int], int, int] | Literal[False]] = {}  # False: no target line in it

    def wanted(code):
        r = code_cache.get(code)
        if r is None:
            s = target_lines(code.co_filename)
            r = False
            if s:
                lo = code.co_firstlineno
                hi = lo
                try:
                    for _, _, ln in code.co_lines():
                        if ln is not None and ln > hi:
                            hi = ln
                except Exception:
                    hi = 1 << 30
                r = (s, lo, hi)
            code_cache[code] = r
        if r is False:
            return False
        s, lo, hi = r
        return any(lo <= ln <= hi for ln in s)

    def local(frame, event, arg):
        if event == "line":
            try:
                hit(frame.f_code.co_filename, frame.f_lineno)
                if not wanted(frame.f_code):
                    return None
            except Exception:
                return None
        return local

    def glob(frame, event, arg):
        try:
            if event == "call" and wanted(frame.f_code):
                return local
        except Exception:
            pass
        return None

    # the frame that is running right now (the main script's <module> is not created yet)
    sys.settrace(glob)
    threading.settrace(glob)
    return "settrace"


def _main():
    if not _EVENTS_PATH:
        return
    import time

    rec = _Recorder(_EVENTS_PATH)
    globals()["_RECORDER"] = rec
    probes = None
    try:
        lines_file = os.environ.get("WARPLINT_CONFIRM_LINES")
        if lines_file:
            probes = _install_line_probes(rec, lines_file)
    except Exception as e:
        rec.fail("lines", e)
    rec.emit(
        "start",
        wall=round(time.time() - (time.perf_counter() - rec.t0), 6),  # the epoch of t = 0 (aligns processes)
        argv=list(sys.argv),
        python=sys.version.split()[0],
        executable=sys.executable,
        run=os.environ.get("WARPLINT_CONFIRM_RUN"),
        cwd=os.getcwd(),
        probes=probes,
    )
    try:
        if "warp" in sys.modules:
            rec.install_warp(sys.modules["warp"])
        else:
            sys.meta_path.insert(0, _WarpFinder(rec))
    except Exception as e:
        rec.fail("finder", e)
    try:
        import atexit

        atexit.register(lambda: rec.emit("end", ok=rec.ok))
    except Exception:
        pass


try:
    _main()
except Exception:
    pass

_chain_sitecustomize()
