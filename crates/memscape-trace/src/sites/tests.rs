use super::*;
use crate::model::Frame;
use crate::{TraceBuilder, TraceFormat};

#[test]
fn qualified_names() {
    let cases = [
        ("make_node", "make_node"),
        ("operator new(unsigned long)", "operator new"),
        ("operator new[](unsigned long)", "operator new[]"),
        (
            "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, int const&)",
            "std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>",
        ),
        (
            "std::unique_ptr<Node, std::default_delete<Node> > std::make_unique<Node, int&>(int&)",
            "std::make_unique<Node, int&>",
        ),
        (
            "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string<std::allocator<char> >(char const*, std::allocator<char> const&)",
            "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string<std::allocator<char> >",
        ),
        ("std::string build_name(int) [clone .cold]", "build_name"),
        ("Foo::operator()(int) const", "Foo::operator()"),
        (
            "(anonymous namespace)::pool::pool()",
            "(anonymous namespace)::pool::pool",
        ),
        ("Foo::operator<<(int)", "Foo::operator<<"),
        (
            "<alloc::alloc::Global as core::alloc::Allocator>::allocate",
            "<alloc::alloc::Global as core::alloc::Allocator>::allocate",
        ),
        ("unsigned long long count_keys()", "count_keys"),
    ];
    for (demangled, expected) in cases {
        assert_eq!(qualified_name(demangled), expected, "{demangled}");
    }
    assert_eq!(
        plain_name(
            "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_create(unsigned long&, unsigned long)"
        ),
        "std::basic_string::_M_create"
    );
    assert_eq!(plain_name("operator new(unsigned long)"), "operator new");
    assert_eq!(
        plain_name("alloc::raw_vec::finish_grow::h0123456789abcdef"),
        "alloc::raw_vec::finish_grow"
    );
}

#[test]
fn builtin_list() {
    for wrapper in [
        "operator new(unsigned long)",
        "operator new[](unsigned long)",
        "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, int const&)",
        "std::unique_ptr<Node, std::default_delete<Node> > std::make_unique<Node, int&>(int&)",
        "std::__shared_count<(__gnu_cxx::_Lock_policy)2>::__shared_count<Node, std::allocator<Node>, int&>(Node*&, std::_Sp_alloc_shared_tag<std::allocator<Node> >, int&)",
        "__gnu_cxx::new_allocator<int>::allocate(unsigned long, void const*)",
        "xmalloc",
        "xcalloc",
        "xrealloc",
        "xstrdup",
        "g_malloc0",
        "g_hash_table_insert",
        "PyMem_Malloc",
        "_PyObject_GC_New",
        "PyObject_Malloc",
        "__rust_alloc",
        "alloc::raw_vec::RawVec<T,A>::reserve_for_push",
        "alloc::raw_vec::finish_grow",
        "<alloc::alloc::Global as core::alloc::Allocator>::allocate",
        "je_malloc_default",
        "mi_malloc",
        "tc_malloc",
        "strdup",
        "__GI___strdup",
        "__libc_malloc",
        "malloc",
        "CRYPTO_malloc",
        "CRYPTO_zalloc",
        "sqlite3Malloc",
        "sqlite3DbMallocRawNN",
        "zmalloc",
        "ztrymalloc_usable",
        "luaM_malloc_",
        "apr_palloc",
        "ngx_pnalloc",
        "ruby_xmalloc2",
        "Tcl_Alloc",
        "av_mallocz",
        "_emalloc",
    ] {
        assert!(is_builtin_wrapper(wrapper), "{wrapper}");
    }
    for site in [
        "make_node",
        "std::string make_name(int)",
        "main",
        "pthread_create",
        "fopen",
        "lookup_name",
        "Foo::operator<<(int)",
        "xmalloc_user_function",
        "sqlite3VdbeExec",
        "CRYPTO_malloc_init_user",
        "sqlite3MallocSize",
        "zmalloc_used_memory",
        "av_malloc_array_user",
    ] {
        assert!(!is_builtin_wrapper(site), "{site}");
    }
}

/// main → {a, b, c, d, e} → my_alloc → xmalloc; plus main → make_node → operator new, and a
/// function that allocates alone from one caller.
fn wrapped_trace() -> (Trace, HashMap<&'static str, u32>) {
    let mut b = TraceBuilder::with_event_times("wrapped");
    let thread = b.thread("main");
    let mut nodes = HashMap::new();
    let frame = |b: &mut TraceBuilder, parent: u32, name: &str, ip: u64| {
        let function = b.strings.intern(name);
        b.call_tree.child(
            parent,
            Frame {
                ip,
                function,
                ..Frame::default()
            },
        )
    };
    let main = frame(&mut b, 0, "main", 1);
    nodes.insert("main", main);
    let callers = ["parse", "index", "load", "render", "store"];
    let mut leaves = Vec::new();
    for (k, name) in callers.iter().enumerate() {
        let caller = frame(&mut b, main, name, 10 + k as u64);
        let wrapper = frame(&mut b, caller, "my_alloc", 100);
        let x = frame(&mut b, wrapper, "xmalloc", 200);
        nodes.insert(*name, caller);
        leaves.push(x);
    }
    let make_node = frame(&mut b, main, "make_node", 20);
    let new = frame(&mut b, make_node, "operator new(unsigned long)", 300);
    nodes.insert("make_node", make_node);
    nodes.insert("operator new", new);
    let lonely = frame(&mut b, main, "lonely", 30);
    nodes.insert("lonely", lonely);
    nodes.insert("leaf0", leaves[0]);
    let mut t = 0;
    let mut address = 0x1000;
    let mut alloc = |b: &mut TraceBuilder, site: u32, size: u64| {
        t += 1;
        address += 0x10000;
        b.alloc(t, t, address, size, 0, thread, site);
    };
    for &leaf in &leaves {
        for _ in 0..10 {
            alloc(&mut b, leaf, 1000);
        }
    }
    for _ in 0..5 {
        alloc(&mut b, new, 100);
        alloc(&mut b, lonely, 500);
    }
    (b.finish(TraceFormat::Csv, true), nodes)
}

#[test]
fn builtin_user_and_detected_wrappers() {
    let (trace, n) = wrapped_trace();
    // Built-in only: xmalloc and operator new are skipped; my_alloc is the site.
    let builtin = Sites::new(
        &trace,
        &SiteOptions {
            detect: false,
            ..SiteOptions::default()
        },
    );
    let leaf = n["leaf0"];
    assert_eq!(short_function(&trace, builtin.site(leaf)), "my_alloc");
    assert_eq!(builtin.label(&trace, leaf), "my_alloc ← xmalloc");
    assert_eq!(builtin.site(n["operator new"]), n["make_node"]);
    assert_eq!(
        builtin.label(&trace, n["operator new"]),
        "make_node ← operator new"
    );
    assert_eq!(builtin.site(n["lonely"]), n["lonely"]);
    // Detection: my_alloc carries 50,000 of 53,000 bytes from five callers.
    let detected = Sites::new(&trace, &SiteOptions::default());
    assert_eq!(detected.site(leaf), n["parse"]);
    assert_eq!(detected.label(&trace, leaf), "parse ← my_alloc");
    assert_eq!(
        detected.kind(trace.call_tree.parent[leaf as usize]),
        WrapperKind::Detected
    );
    assert_eq!(detected.detected().len(), 1);
    assert_eq!(detected.detected()[0].frames, ["my_alloc"]);
    assert_eq!(detected.detected()[0].callers, 5);
    assert_eq!(detected.detected()[0].bytes, 50_000);
    // The user's pattern does the same without detection.
    let user = Sites::new(
        &trace,
        &SiteOptions {
            detect: false,
            ..SiteOptions::with_patterns(&["^my_alloc$"]).unwrap_or_default()
        },
    );
    assert_eq!(user.site(leaf), n["parse"]);
    assert_eq!(
        user.kind(trace.call_tree.parent[leaf as usize]),
        WrapperKind::User
    );
    // No rules: the innermost frame.
    let raw = Sites::new(&trace, &SiteOptions::innermost());
    assert_eq!(raw.site(leaf), leaf);
    assert_eq!(raw.label(&trace, leaf), "xmalloc");
}

#[test]
fn one_caller_is_no_wrapper() {
    // lonely holds most bytes but from one caller: no detection.
    let mut b = TraceBuilder::with_event_times("one");
    let thread = b.thread("main");
    let main = b.strings.intern("main");
    let worker = b.strings.intern("worker");
    let m = b.call_tree.child(
        0,
        Frame {
            ip: 1,
            function: main,
            ..Frame::default()
        },
    );
    let w = b.call_tree.child(
        m,
        Frame {
            ip: 2,
            function: worker,
            ..Frame::default()
        },
    );
    for i in 0..100u64 {
        b.alloc(i, i, 0x1000 + i * 0x100, 64, 0, thread, w);
    }
    let trace = b.finish(TraceFormat::Csv, true);
    let sites = Sites::new(&trace, &SiteOptions::default());
    assert_eq!(sites.site(w), w);
    assert!(sites.detected().is_empty());
}

#[test]
fn an_unnamed_frame_without_its_offset_shows_its_address() {
    let f = |ip, module_offset| Frame {
        ip,
        module_offset,
        ..Frame::default()
    };
    assert_eq!(
        f(0x7f00_0000_1234, 0x1234).in_module("libc.so.6"),
        "libc.so.6+0x1234"
    );
    assert_eq!(
        f(0x7fbb_a86b_134a, 0).in_module("libGL.so.1"),
        "libGL.so.1 @0x7fbba86b134a"
    );
}
