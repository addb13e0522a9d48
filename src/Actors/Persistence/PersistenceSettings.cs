namespace Courier.Actors.Persistence;

/// <summary>Tuning of the persistence layer (Akka's <c>akka.persistence</c> HOCON keys, as a record).</summary>
public sealed record PersistenceSettings
{
    /// <summary>
    /// Atomic writes the journal actor gathers at most before it writes (one engine call, one fsync). It writes
    /// earlier whenever its mailbox runs empty, so this only bounds the latency of a sustained burst.
    /// Default 512: a few hundred small events are one write of tens of kilobytes.
    /// </summary>
    public int MaxWriteBatch { get; init; } = 512;

    /// <summary>How long recovery waits for the snapshot, and for each next event (Akka's
    /// <c>recovery-event-timeout</c>, default 30 s); then it fails and the actor stops.</summary>
    public TimeSpan RecoveryEventTimeout { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>Publish DeleteMessagesTo, DeleteSnapshot and DeleteSnapshots on the event stream when done
    /// (Akka's <c>publish-plugin-commands</c>; tests subscribe to them). Default off.</summary>
    public bool PublishPluginCommands { get; init; }
}
