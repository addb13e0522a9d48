using Courier.Actors.Persistence;
using Courier.Actors.Runtime.TestKit;
using Courier.Storage.Persistence;

namespace Courier.Actors.Tests.Persistence;

/// <summary>
/// A TestKit whose system has persistence registered over a <see cref="TestJournal"/> (around a memory or a
/// file journal) and a snapshot store; the engines are disposed after the system has terminated.
/// </summary>
public abstract class PersistenceTestKit : TestKitBase
{
    private readonly List<IDisposable> _owned = [];

    protected PersistenceTestKit(bool onDisk = false, PersistenceSettings? settings = null)
        : base("persistence")
    {
        Directory = Path.Combine(Path.GetTempPath(), "courier-persistence-tests", Guid.NewGuid().ToString("N"));
        var (journal, snapshots) = onDisk ? OpenEngines(Directory) : (new MemoryJournalStore(), (ISnapshotStore)new MemorySnapshotStore());
        Journal = new TestJournal(journal);
        Snapshots = snapshots;
        Persistence = PersistenceExtension.Register(Sys, Journal, Snapshots, settings ?? new PersistenceSettings { PublishPluginCommands = true });
    }

    /// <summary>Where the file engines live (unused for memory).</summary>
    protected string Directory { get; }

    protected TestJournal Journal { get; }

    protected ISnapshotStore Snapshots { get; }

    protected PersistenceExtension Persistence { get; }

    /// <summary>Opens the file journal and snapshot store under <paramref name="directory"/>.</summary>
    protected static (IJournalStore Journal, ISnapshotStore Snapshots) OpenEngines(string directory) =>
        (FileJournalStore.Open(Path.Combine(directory, "journal")), FileSnapshotStore.Open(Path.Combine(directory, "snapshots")));

    /// <summary>Disposes <paramref name="disposable"/> with the test.</summary>
    protected T Own<T>(T disposable)
        where T : IDisposable
    {
        _owned.Add(disposable);
        return disposable;
    }

    /// <summary>The events stored for <paramref name="persistenceId"/>, read from the engine.</summary>
    protected List<JournalRecord> StoredEvents(string persistenceId)
    {
        var events = new List<JournalRecord>();
        Journal.ReplayMessages(persistenceId, 1, long.MaxValue, long.MaxValue, events.Add);
        return events;
    }

    protected override void Dispose(bool disposing)
    {
        try
        {
            base.Dispose(disposing);
        }
        finally
        {
            if (disposing)
            {
                Journal.Dispose();
                Snapshots.Dispose();
                foreach (var owned in _owned)
                {
                    owned.Dispose();
                }

                try
                {
                    System.IO.Directory.Delete(Directory, recursive: true);
                }
                catch (DirectoryNotFoundException)
                {
                }
                catch (IOException)
                {
                }
            }
        }
    }
}
