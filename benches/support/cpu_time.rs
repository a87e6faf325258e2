//! A criterion `Measurement` of the bench thread's on-CPU time (Linux,
//! `CLOCK_THREAD_CPUTIME_ID`), selected with `STRATA_BENCH_CLOCK=cpu`: on a shared machine wall
//! time is inflated by other processes, CPU time much less. Included by benches with `#[path]`.

use criterion::Throughput;
use criterion::measurement::{Measurement, ValueFormatter};

/// True when `STRATA_BENCH_CLOCK=cpu` asks for CPU time instead of wall time.
pub fn cpu_clock_requested() -> bool {
    std::env::var("STRATA_BENCH_CLOCK").as_deref() == Ok("cpu")
}

/// Nanoseconds the current thread has spent on a CPU (`CLOCK_THREAD_CPUTIME_ID`).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuTime;

/// `struct timespec` of 64-bit Linux.
#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

/// Linux's id of the calling thread's CPU-time clock.
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

unsafe extern "C" {
    fn clock_gettime(clock: i32, time: *mut Timespec) -> i32;
}

impl CpuTime {
    fn now() -> u64 {
        let mut time = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `time` is a valid, writable timespec; std links the C library.
        let status = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &raw mut time) };
        assert_eq!(status, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
        u64::try_from(time.tv_sec).unwrap() * 1_000_000_000 + u64::try_from(time.tv_nsec).unwrap()
    }
}

impl Measurement for CpuTime {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        Self::now()
    }

    fn end(&self, start: u64) -> u64 {
        Self::now().saturating_sub(start)
    }

    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }

    fn zero(&self) -> u64 {
        0
    }

    #[expect(
        clippy::cast_precision_loss,
        reason = "nanosecond counts fit f64's mantissa"
    )]
    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        self
    }
}

impl ValueFormatter for CpuTime {
    fn scale_values(&self, _typical: f64, _values: &mut [f64]) -> &'static str {
        "ns (cpu)"
    }

    #[expect(
        clippy::cast_precision_loss,
        reason = "element counts fit f64's mantissa"
    )]
    fn scale_throughputs(
        &self,
        _typical: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        let per_iteration = match throughput {
            Throughput::Bytes(n) | Throughput::BytesDecimal(n) | Throughput::Elements(n) => *n,
        } as f64;
        for value in values.iter_mut() {
            *value = per_iteration * 1e9 / *value;
        }
        "elem/s (cpu)"
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}
