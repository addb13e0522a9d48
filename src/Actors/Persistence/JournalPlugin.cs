using System.Collections.Immutable;
using Akka.Actor;
using Akka.Configuration;
using Akka.Event;
using Akka.Persistence;
using Akka.Persistence.Journal;
using Courier.Storage;
using Courier.Storage.Persistence;

namespace Courier.Actors.Persistence;

/// <summary>
/// Akka.Persistence's journal on Courier's FileStore (plugin id <c>courier.persistence.journal</c>):
/// events of every persistent actor in one <see cref="FileJournalStore"/>, one store message per
/// atomic write, checksummed, with the same sync policy as the streams.
/// </summary>
/// <remarks>
/// <para><b>Group commit.</b> Akka calls <see cref="WriteMessagesAsync"/> once per persistent actor's
/// batch, without waiting for the previous call. Each call serializes its events here (on the plugin's
/// dispatcher) and queues them on the <see cref="JournalWriter"/>, whose thread makes everything queued
/// durable with one write and one fsync. So N consumers acking at once cost one fsync.</para>
/// <para><b>Replay</b> reads the engine on the plugin's dispatcher; the engine is thread-safe and a replay
/// never waits for an fsync. <b>Deletes</b> queue behind earlier writes.</para>
/// <para>An event that cannot be serialized is rejected alone (Akka: <c>OnPersistRejected</c>, the actor goes
/// on); an engine failure fails the whole batch (<c>OnPersistFailure</c>, the actor stops).</para>
/// </remarks>
internal sealed class JournalPlugin : AsyncWriteJournal, IWithTimers
{
    private readonly IJournalStore _store;
    private readonly JournalWriter _writer;
    private readonly SyncPolicy _sync;
    private readonly ILoggingAdapter _log = Context.GetLogger();

    public JournalPlugin(Config config)
    {
        var directory = PluginSettings.Directory(config);
        _sync = PluginSettings.Sync(config);
        _store = directory is null ? new MemoryJournalStore() : FileJournalStore.Open(directory, new FileStoreOptions { Sync = _sync, Encryption = Hosting.StoreEncryptionSetup.Of(Context.System) });
        foreach (var warning in _store.Warnings)
        {
            _log.Warning("journal {0}: {1}", directory, warning);
        }

        _writer = new JournalWriter(_store, "courier-journal");
    }

    /// <inheritdoc />
    public ITimerScheduler Timers { get; set; } = null!;

    /// <summary>Group commits (engine calls) so far; readable from any thread.</summary>
    internal long Batches => _writer.Batches;

    protected override void PreStart()
    {
        base.PreStart();
        if (!_sync.IsAlways)
        {
            // sync_interval: events are written before they are acknowledged, fsynced on this period.
            Timers.StartPeriodicTimer("sync", SyncTick.Instance, _sync.Period);
        }
    }

    protected override void PostStop()
    {
        _writer.Dispose();
        _store.Dispose();
        base.PostStop();
    }

    protected override bool ReceivePluginInternal(object message)
    {
        switch (message)
        {
            case SyncTick:
                _writer.SyncAsync().ContinueWith(
                    (t, log) => ((ILoggingAdapter)log!).Error(t.Exception?.GetBaseException(), "journal sync failed"),
                    _log,
                    CancellationToken.None,
                    TaskContinuationOptions.OnlyOnFaulted,
                    TaskScheduler.Default);
                return true;
            default:
                return false;
        }
    }

    protected override Task<IImmutableList<Exception?>> WriteMessagesAsync(IEnumerable<AtomicWrite> messages, CancellationToken cancellationToken)
    {
        var writes = new List<JournalWrite>();
        var positions = new List<int>(); // messages[i] -> index in writes, or -1 when rejected here
        var rejected = new List<Exception?>();
        foreach (var message in messages)
        {
            try
            {
                writes.Add(ToJournalWrite(message));
                positions.Add(writes.Count - 1);
                rejected.Add(null);
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                // Not serializable: this atomic write is rejected, the others go on.
                positions.Add(-1);
                rejected.Add(e);
            }
        }

        if (writes.Count == 0)
        {
            return Task.FromResult<IImmutableList<Exception?>>(rejected.ToImmutableList());
        }

        return Complete(_writer.WriteAsync([.. writes]), positions, rejected);

        static async Task<IImmutableList<Exception?>> Complete(Task<Exception?[]> written, List<int> positions, List<Exception?> rejected)
        {
            var engine = await written.ConfigureAwait(false);
            var result = ImmutableList.CreateBuilder<Exception?>();
            for (var i = 0; i < positions.Count; i++)
            {
                result.Add(positions[i] < 0 ? rejected[i] : engine[positions[i]]);
            }

            return result.ToImmutable();
        }
    }

    protected override Task DeleteMessagesToAsync(string persistenceId, long toSequenceNr, CancellationToken cancellationToken) =>
        _writer.DeleteAsync(persistenceId, toSequenceNr);

    public override Task<long> ReadHighestSequenceNrAsync(string persistenceId, long fromSequenceNr, CancellationToken cancellationToken) =>
        Task.FromResult(_store.ReadHighestSequenceNr(persistenceId, fromSequenceNr));

    public override Task ReplayMessagesAsync(IActorContext context, string persistenceId, long fromSequenceNr, long toSequenceNr, long max, Action<IPersistentRepresentation> recoveryCallback)
    {
        var system = context.System;
        _store.ReplayMessages(persistenceId, fromSequenceNr, toSequenceNr, max, record =>
        {
            var (manifest, adapterManifest) = SplitManifest(record.Manifest);
            var payload = PayloadSerialization.Deserialize(system, record.Payload.ToArray(), manifest);
            recoveryCallback(new Persistent(
                payload,
                record.SequenceNr,
                record.PersistenceId,
                adapterManifest,
                isDeleted: false,
                ActorRefs.NoSender,
                record.WriterGuid,
                UnixNanosToTicks(record.Timestamp)));
        });
        return Task.CompletedTask;
    }

    private JournalWrite ToJournalWrite(AtomicWrite write)
    {
        var events = (IImmutableList<IPersistentRepresentation>)write.Payload;
        var records = new JournalRecord[events.Count];
        for (var i = 0; i < records.Length; i++)
        {
            var e = events[i];
            var (bytes, manifest) = PayloadSerialization.Serialize(Context.System, e.Payload);
            records[i] = new JournalRecord(e.PersistenceId, e.SequenceNr, bytes, JoinManifest(manifest, e.Manifest), e.WriterGuid ?? "", TicksToUnixNanos(e.Timestamp));
        }

        return new JournalWrite(records);
    }

    // The engine keeps one manifest per event: the serializer's, then (rarely) an event adapter's.
    private const char AdapterSeparator = '\u001f';

    private static string JoinManifest(string serializer, string? adapter) =>
        string.IsNullOrEmpty(adapter) ? serializer : serializer + AdapterSeparator + adapter;

    private static (string Serializer, string Adapter) SplitManifest(string stored)
    {
        var at = stored.IndexOf(AdapterSeparator, StringComparison.Ordinal);
        return at < 0 ? (stored, "") : (stored[..at], stored[(at + 1)..]);
    }

    // Akka's timestamps are DateTime ticks (0: unset); the engine's are Unix nanoseconds (0: now).
    private static long TicksToUnixNanos(long ticks) => ticks <= 0 ? 0 : (ticks - DateTime.UnixEpoch.Ticks) * 100;

    private static long UnixNanosToTicks(long nanos) => nanos <= 0 ? 0 : DateTime.UnixEpoch.Ticks + (nanos / 100);

    /// <summary>The sync_interval timer's tick.</summary>
    private sealed class SyncTick
    {
        public static readonly SyncTick Instance = new();

        private SyncTick()
        {
        }
    }
}
