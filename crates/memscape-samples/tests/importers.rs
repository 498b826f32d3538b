//! Importers on crafted inputs: bad rows, unknown columns, `??`, Mitos and perf script text;
//! and mutated real inputs that must never panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_samples::{
    AttrKind, ColumnData, DataSourceRadix, ImportOptions, MemLevel, NONE, SampleFormat, Samples,
    histogram, parse_samples,
};
use memscape_topology::shared_data_dir;

fn parse(text: &str) -> Samples {
    parse_samples(text.as_bytes(), "crafted.csv", ImportOptions::default()).unwrap()
}

const MEMAXES_HEADER: &str =
    "variable,source,line,time,iter,latency,dataSource,cpu,node,index,map3D,xidx,yidx,zidx";

#[test]
fn memaxes_bad_rows_are_counted_with_line_numbers() {
    let text = format!(
        "{MEMAXES_HEADER},phase\n\
         m_x,LULESH_OMP.cc,10,1f,1,30,1,0,0,5,1,1,2,3,warm\n\
         m_x,LULESH_OMP.cc,10,zz,1,30,1,0,0,5,1,1,2,3,warm\n\
         m_y,??,0,20,1,40,3,1,0,5,1,1,2,3,cold\n\
         too,few,fields\n\
         m_z,LULESH_OMP.cc,11,21,1,??,3,1,0,5,1,1,2,3,cold\n\
         \n\
         m_z,LULESH_OMP.cc,11,22,1,50,??,??,0,5,1,1,2,3,??\n"
    );
    let s = parse(&text);
    assert_eq!(s.format, SampleFormat::MemaxesCsv);
    assert_eq!(s.len(), 3);
    let w = &s.warnings;
    assert_eq!(w.count("bad_number"), 1);
    assert_eq!(w.count("wrong_field_count"), 1);
    assert_eq!(w.count("unknown_latency"), 1);
    let lines = |kind: &str| -> Vec<u64> {
        w.kinds()
            .iter()
            .find(|k| k.kind == kind)
            .unwrap()
            .first
            .iter()
            .map(|l| l.line.unwrap())
            .collect()
    };
    assert_eq!(lines("bad_number"), vec![3]);
    assert_eq!(lines("wrong_field_count"), vec![5]);
    assert_eq!(lines("unknown_latency"), vec![6]);
    assert!(w.to_string().contains("crafted.csv:3"));
    // time is hexadecimal
    let time = s.column("time").unwrap();
    assert_eq!(time.value(0), Some(31.0));
    // `??` source → no source line; `??` cpu → NONE; level of `??` dataSource unknown
    assert_eq!(s.source_line[1], NONE);
    assert_eq!(s.cpu[2], NONE);
    assert_eq!(s.level[2], MemLevel::Unknown);
    assert_eq!(s.level[0], MemLevel::L1);
    assert_eq!(s.level[1], MemLevel::L2);
    // unknown column → categorical state variable with an unknown value
    let phase = s.column("phase").unwrap();
    assert_eq!(phase.kind, AttrKind::Qualitative);
    assert_eq!(phase.label(0).as_deref(), Some("warm"));
    assert_eq!(phase.value(2), None);
    // numeric ids are qualitative, indices quantitative
    assert_eq!(s.column("cpu").unwrap().kind, AttrKind::Qualitative);
    assert_eq!(s.column("xidx").unwrap().kind, AttrKind::Quantitative);
}

#[test]
fn memaxes_header_errors_name_the_file() {
    let err = parse_samples(b"", "empty.csv", ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("empty.csv"), "{err}");
    let err = parse_samples(
        b"variable,dataSource,cpu\nx,1,0\n",
        "nolat.csv",
        ImportOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("nolat.csv:1") && err.contains("latency"),
        "{err}"
    );
    let err = parse_samples(b"a,b,c\n1,2,3\n", "what.csv", ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("what.csv:1") && err.contains("expected"),
        "{err}"
    );
}

#[test]
fn data_source_radix_override() {
    let text = format!("{MEMAXES_HEADER}\nv,f.c,1,1,1,30,17,0,0,1,1,1,1,1\n");
    let dec = parse_samples(
        text.as_bytes(),
        "r.csv",
        ImportOptions {
            data_source_radix: DataSourceRadix::Decimal,
        },
    )
    .unwrap();
    let hex = parse_samples(
        text.as_bytes(),
        "r.csv",
        ImportOptions {
            data_source_radix: DataSourceRadix::Hex,
        },
    )
    .unwrap();
    assert_eq!(dec.level[0], MemLevel::L1); // 17 = 0x11 → low nibble 1
    assert_eq!(hex.level[0], MemLevel::L3); // 0x17 → low nibble 7
    // Auto switches to hex when a letter appears.
    let text = format!(
        "{MEMAXES_HEADER}\nv,f.c,1,1,1,30,17,0,0,1,1,1,1,1\nv,f.c,1,1,1,30,1a,0,0,1,1,1,1,1\n"
    );
    let auto = parse(&text);
    assert_eq!(auto.level[0], MemLevel::L3);
    assert_eq!(auto.level[1], MemLevel::LocalRam); // 0x1a → 0xA
}

#[test]
fn mitos_csv_decodes_perf_mem_data_src() {
    // data_src: LOAD | LVL(HIT|L1) ; LOAD | LVL(HIT|REM_RAM1) ; LOAD | LVL(MISS|L3)
    let l1 = 0x2u64 | ((0x2 | 0x8) << 5);
    let rem = 0x2u64 | ((0x2 | 0x100) << 5);
    let miss = 0x2u64 | ((0x4 | 0x40) << 5);
    let text = format!(
        "source,line,instruction,bytes,ip,variable,buffer_size,dims,xidx,yidx,zidx,pid,tid,time,addr,cpu,latency,data_src,extra\n\
         a.c,3,mov,8,4198400,buf,64,1,0,0,0,10,11,1000,140000,2,12,{l1},1.5\n\
         a.c,4,mov,8,4198404,buf,64,1,1,0,0,10,11,1001,140008,3,300,{rem},2.5\n\
         ??,0,??,8,4198408,??,64,1,2,0,0,10,11,1002,140016,3,90,{miss},x\n\
         a.c,4,mov,8,4198404,buf,64,1,1,0,0,10,11,notanumber,140008,3,300,{rem},2.5\n"
    );
    let s = parse(&text);
    assert_eq!(s.format, SampleFormat::MitosCsv);
    assert_eq!(s.len(), 3);
    assert_eq!(s.warnings.count("bad_number"), 1);
    assert_eq!(
        s.level,
        vec![MemLevel::L1, MemLevel::RemoteRam, MemLevel::L3Miss]
    );
    assert_eq!(s.symbols, vec!["buf".to_string()]);
    assert_eq!(s.symbol[2], NONE);
    assert_eq!(s.source_lines[s.source_line[1] as usize], "a.c:4");
    // mixed numeric/text unknown column → categorical
    assert_eq!(s.column("extra").unwrap().kind, AttrKind::Qualitative);
    assert!(matches!(s.column("addr").unwrap().data, ColumnData::U64(_)));
}

#[test]
fn perf_script_text() {
    let text = "\
# perf script header comment\n\
            lulesh 4242 [003] 12345.678901:      30 cpu/mem-loads,ldlat=30/P:     7ffd0a1b2c30         68100142 |OP LOAD|LVL L1 hit|SNP None|TLB L1 or L2 hit|LCK No|BLK  N/A        34 401a2b CalcForce+0x2b (/home/u/lulesh)\n\
            lulesh 4243 [001] 12345.678950:      30 cpu/mem-loads,ldlat=30/P:     7ffd0a1b2c38         68201042 |OP LOAD|LVL Local RAM hit|SNP Hit|TLB L1 or L2 hit|LCK No|BLK  N/A       250 401a2f CalcForce+0x2f (/home/u/lulesh)\n\
garbage line\n\
            lulesh 4243 [001] 12345.679000:      30 cpu/mem-loads,ldlat=30/P:     7ffd0a1b2c40                0 |OP LOAD|LVL L2 hit|SNP None|          45 401a30 main+0x1 (/home/u/lulesh)\n";
    let s = parse(text);
    assert_eq!(s.format, SampleFormat::PerfScript);
    assert_eq!(s.len(), 3);
    assert_eq!(s.warnings.count("bad_perf_line"), 1);
    assert_eq!(s.latency, vec![34, 250, 45]);
    assert_eq!(s.cpu, vec![3, 1, 1]);
    // 0x68100142 = LOAD | LVL(HIT|L1) …; 0x68201042 has LVL(HIT|LOC_RAM); 0 → read from the text.
    assert_eq!(
        s.level,
        vec![MemLevel::L1, MemLevel::LocalRam, MemLevel::L2]
    );
    assert_eq!(s.symbols, vec!["CalcForce".to_string(), "main".to_string()]);
    let h = histogram(&s, "cpu", 10, None).unwrap();
    assert_eq!(h.bins.len(), 2);
    assert_eq!(h.bins[0].label.as_deref(), Some("3"));
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn real() -> Vec<u8> {
        let bytes = std::fs::read(shared_data_dir().join("memaxes/lulesh/samples.out")).unwrap();
        // The first 200 lines keep each case fast.
        let end = bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .nth(200)
            .map_or(bytes.len(), |(i, _)| i + 1);
        bytes[..end].to_vec()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]
        /// Mutated LULESH CSV: parsed or rejected with an error, never a panic; every row is
        /// either loaded or counted as a warning.
        #[test]
        fn mutated_memaxes_csv(
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..20),
        ) {
            let mut bytes = real();
            for (at, byte, op) in edits {
                if bytes.is_empty() { break; }
                let i = at.index(bytes.len());
                match op {
                    0 => bytes[i] = byte,
                    1 => { bytes.remove(i); }
                    _ => bytes.insert(i, byte),
                }
            }
            if let Ok(s) = parse_samples(&bytes, "fuzz.csv", ImportOptions::default()) {
                prop_assert_eq!(s.latency.len(), s.cpu.len());
                prop_assert_eq!(s.level.len(), s.len());
                for c in &s.columns {
                    prop_assert_eq!(c.len(), s.len());
                }
            }
        }

        /// Arbitrary lines never panic the perf script reader.
        #[test]
        fn arbitrary_perf_lines(lines in proptest::collection::vec("[ -~|\\[\\]:()+]{0,120}", 1..20)) {
            let text = lines.join("\n");
            let _ = parse_samples(text.as_bytes(), "fuzz.txt", ImportOptions::default());
        }
    }
}

/// A MemAxes file whose `variable` column holds a C++ symbol quoted as CSV does it loaded no
/// sample at all: every row was "the wrong field count". Quoted fields (commas, doubled quotes,
/// a line break inside quotes) are one field each, and warnings still name the right line.
#[test]
fn memaxes_quoted_cpp_symbols_load() {
    let text = format!(
        "{MEMAXES_HEADER}\n\
         \"std::map<int, double>\",LULESH_OMP.cc,2014,1f,1,30,1,0,0,5,1,1,2,3\n\
         \"operator\"\"\"\"\",LULESH_OMP.cc,2015,20,1,40,1,1,0,5,1,1,2,3\n\
         \"two\nlines\",LULESH_OMP.cc,2016,21,1,50,1,1,0,5,1,1,2,3\n\
         m_x,LULESH_OMP.cc,2017,zz,1,50,1,1,0,5,1,1,2,3\n"
    );
    let s = parse(&text);
    assert_eq!(s.len(), 3, "{}", s.warnings);
    assert_eq!(s.warnings.count("wrong_field_count"), 0);
    assert_eq!(
        s.symbols,
        vec!["std::map<int, double>", "operator\"\"", "two\nlines"]
    );
    assert_eq!(
        s.source_lines[s.source_line[0] as usize],
        "LULESH_OMP.cc:2014"
    );
    // The bad row is on line 6: the quoted line break counts.
    let bad = &s.warnings.kinds()[0];
    assert_eq!((bad.kind, bad.first[0].line), ("bad_number", Some(6)));
}

/// Mitos writes `data_src` 2 (a load, no level bits) for every sample of its example runs: the
/// level is unknown, and the report says so rather than counting the samples on their PU as
/// if that PU had served them.
#[test]
fn mitos_data_src_without_level_is_level_unknown() {
    let text = "source,line,instruction,bytes,ip,variable,buffer_size,dims,xidx,yidx,zidx,pid,tid,time,addr,cpu,latency,data_src\n\
         a.c,3,mov,8,4198400,buf,64,1,0,0,0,10,11,1000,140000,1,12,2\n\
         a.c,4,mov,8,4198404,buf,64,1,1,0,0,10,11,1001,140008,1,30,2\n";
    let s = parse(text);
    assert_eq!(s.level, vec![MemLevel::Unknown, MemLevel::Unknown]);
    assert_eq!(MemLevel::Unknown.label(), "level unknown");
    let level = s.column("level").unwrap();
    let ColumnData::Category { labels, .. } = &level.data else {
        panic!("level is categorical")
    };
    assert_eq!(labels, &vec!["level unknown".to_string()]);
    let topology = memscape_topology::Topology::load(Some(
        &shared_data_dir().join("memaxes/lulesh/hardware.xml"),
    ))
    .unwrap();
    let mapping = memscape_samples::Mapping::new(&s, &topology);
    let report = memscape_samples::samples_report(&s, &topology, &mapping, &[]).unwrap();
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(
        json["levels"],
        serde_json::json!([{"level": "level unknown", "samples": 2, "cycles": 42}])
    );
    let pu = topology.pu(1).unwrap();
    let at_pu = json["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == pu)
        .unwrap();
    assert_eq!(at_pu["samples"], 2);
    assert_eq!(at_pu["level_unknown"], 2);
}
