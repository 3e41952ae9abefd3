use weir_executor::{Error, ExecutorConfig, PipelineExecutor, split_threads};

#[test]
fn split_threads_table() {
    let table = [
        (0, 0, 0),
        (1, 1, 0),
        (2, 1, 1),
        (3, 2, 1),
        (4, 3, 1),
        (8, 7, 1),
        (16, 14, 2),
        // The seed's table said 27/5; its formula (85 % rounded up) says 28/4.
        (32, 28, 4),
        (100, 85, 15),
    ];
    for (total, main, reserve) in table {
        assert_eq!(split_threads(total), (main, reserve), "total {total}");
    }
    for total in 2..300 {
        let (main, reserve) = split_threads(total);
        assert_eq!(main + reserve, total);
        assert!(main >= 1 && reserve >= 1, "total {total}");
    }
}

fn invalid(config: ExecutorConfig) -> String {
    match PipelineExecutor::new(config) {
        Err(Error::InvalidConfig(message)) => message,
        other => panic!("expected InvalidConfig, got {other:?}"),
    }
}

#[test]
fn invalid_configs_are_rejected() {
    assert!(invalid(ExecutorConfig::with_threads(0)).contains("threads"));
    let zero_queue = ExecutorConfig {
        queue_capacity: Some(0),
        ..ExecutorConfig::with_threads(2)
    };
    assert!(invalid(zero_queue).contains("queue_capacity"));
    for split in [(0, 2), (1, 2), (3, 0)] {
        let config = ExecutorConfig {
            split: Some(split),
            ..ExecutorConfig::with_threads(2)
        };
        assert!(invalid(config).contains("split"), "{split:?}");
    }
}

#[test]
fn default_and_explicit_splits() {
    let executor = PipelineExecutor::new(ExecutorConfig::with_threads(4)).unwrap();
    assert_eq!(executor.split(), (3, 1));
    assert_eq!(executor.threads(), 4);
    let all_main = PipelineExecutor::new(ExecutorConfig {
        split: Some((2, 0)),
        ..ExecutorConfig::with_threads(2)
    })
    .unwrap();
    assert_eq!(all_main.split(), (2, 0));
    let default = ExecutorConfig::default();
    assert!(default.threads >= 1);
    assert_eq!(default.split, None);
    assert_eq!(default.queue_capacity, None);
    assert_eq!(default.thread_name, "weir");
}
