//! Why a replay window declines a dispatch: the snapshot's capture errors and the window's own
//! reasons (coverage, drains, configuration, unbounded loops, reachable host memory, host
//! calls, multi-device launches). The window creates every reason; the snapshot below it knows
//! only [`CaptureError`].

use crate::snapshot::CaptureError;

/// Why a dispatch is not replayed (it runs once, normally).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeclineReason {
    /// The snapshot could not be captured.
    #[error(transparent)]
    Capture(#[from] CaptureError),
    /// The client asked for an unbounded loop without a continue callback.
    #[error("an unbounded pass count needs a continue callback")]
    UnboundedWithoutContinue,
    /// Memory or work on the agent escapes the inventory or the drains.
    #[error("{0}")]
    Coverage(CoverageGap),
    /// The queue drain or the agent-wide drain did not finish within the decline bound.
    #[error(
        "{detail} within {bound_ms} ms (KREPLAY_DRAIN_DECLINE_MS); that work may wait for this dispatch"
    )]
    Drain {
        /// What did not finish.
        detail: String,
        /// The bound.
        bound_ms: u64,
    },
    /// A replay setting of the environment is invalid.
    #[error("{0}")]
    Configuration(String),
    /// Host or fine-grained memory the dispatch can reach cannot be restored safely, or the
    /// host-memory policy declines it (`KREPLAY_HOST_MEMORY`).
    #[error("{0}")]
    HostReachable(String),
    /// The kernel may call the host through the hostcall buffer (its code-object metadata
    /// lists the buffer): the runtime serves each call as it comes, and what it did (text
    /// printed, memory handed out) cannot be undone between passes.
    #[error(
        "the kernel may call the host (device printf, malloc or another host service: its code-object metadata lists \
         the hostcall buffer); the host's side of a call cannot be undone, so every pass would repeat it"
    )]
    HostCalls,
    /// The dispatch is one grid of a multi-device cooperative launch (or its cooperative-launch
    /// argument could not be read): the grids wait for each other, so one cannot run again
    /// alone, and waiting for it before the next agent's grid is submitted never ends.
    #[error("{0}")]
    MultiGrid(String),
    /// A window run off the submitting thread met asynchronous copies, submitted after the
    /// dispatch, that wait on signals: the runtime's copy engine may run them in order, so the
    /// snapshot's own copies could wait for this dispatch.
    #[error(
        "asynchronous copies waiting on signals were submitted while this dispatch waited behind its queue's gate; \
         the runtime's copy engine could hold the snapshot's copies behind them"
    )]
    DependentCopies,
}

impl DeclineReason {
    /// A short tag for records (`copy`, `symbols`, ...).
    pub fn tag(&self) -> &'static str {
        match self {
            DeclineReason::Capture(e) => e.tag(),
            DeclineReason::UnboundedWithoutContinue => "unbounded without continue",
            DeclineReason::Coverage(_) => "coverage",
            DeclineReason::Drain { .. } => "drain",
            DeclineReason::Configuration(_) => "configuration",
            DeclineReason::HostReachable(_) => "reachable host memory",
            DeclineReason::HostCalls => "host calls",
            DeclineReason::MultiGrid(_) => "multi-device launch",
            DeclineReason::DependentCopies => "dependent copies",
        }
    }
}

/// Why a replay on an agent cannot rely on the inventory and the drains.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoverageGap {
    /// Queues may still run work submitted before the client registered.
    #[error(
        "queue(s) {queues} of this agent ran dispatches before the replay client registered and have not submitted since, \
         so the tool cannot prove that work finished; replay resumes once every such queue submitted again or was destroyed \
         (register the client from OnLoad to avoid this)"
    )]
    Unfenced {
        /// Ids of the unfenced queues.
        queues: String,
    },
    /// Queues on the agent that the tool did not create.
    #[error(
        "{count} queue(s) on this agent were not created through hsa_queue_create while kreplay was active \
         (hsa_amd_queue_intercept_create called directly, or a fallback queue); their work is neither replayed nor drained"
    )]
    ForeignQueues {
        /// Live foreign queues on the agent.
        count: usize,
    },
}
