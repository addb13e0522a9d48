using Xunit;

namespace Courier.Storage.Tests;

/// <summary>
/// Walking one subject with <c>LoadNextMessage(subject, previous + 1)</c> (how the journal replays one
/// persistence id) follows the subject's chain; it must give exactly what a scan of every sequence gives,
/// whatever was removed, purged, compacted or truncated in between.
/// </summary>
public abstract partial class StreamStoreTests
{
    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void Walking_a_subject_message_by_message_matches_a_full_scan_after_random_removals(int seed)
    {
        var random = new Random(seed);
        var store = Create();
        string[] subjects = ["s.a", "s.b", "s.c", "s.d", "s.e"];
        for (var round = 0; round < 6; round++)
        {
            for (var i = 0; i < 150; i++)
            {
                PutOk(store, subjects[random.Next(subjects.Length)]);
            }

            var state = store.State();
            for (var i = 0; i < 40 && state.Msgs > 0; i++)
            {
                store.RemoveMessage(state.FirstSeq + (ulong)random.Next((int)(state.LastSeq - state.FirstSeq + 1)));
            }

            switch (round)
            {
                case 1:
                    store.Purge("s.c", 0, 3);
                    break;
                case 2:
                    store.Compact(store.State().FirstSeq + 20);
                    break;
                case 3:
                    var last = store.LoadLastMessage("s.a");
                    if (last.Found)
                    {
                        store.Truncate(last.Message!.Sequence);
                    }

                    break;
            }

            store.Flush();
            if (round == 4)
            {
                store = Reopen(store);
            }

            foreach (var subject in subjects)
            {
                Assert.Equal(Scan(store, subject), Walk(store, subject));
            }
        }
    }

    private static List<ulong> Walk(IStreamStore store, string subject)
    {
        var found = new List<ulong>();
        ulong next = 0;
        while (true)
        {
            var load = store.LoadNextMessage(subject, next);
            if (!load.Found)
            {
                return found;
            }

            Assert.Equal(subject, load.Message!.Subject);
            found.Add(load.Message.Sequence);
            next = load.Message.Sequence + 1;
        }
    }

    private static List<ulong> Scan(IStreamStore store, string subject)
    {
        var state = store.State();
        var found = new List<ulong>();
        for (var seq = state.FirstSeq; seq <= state.LastSeq && state.Msgs > 0; seq++)
        {
            var load = store.LoadMessage(seq);
            if (load.Found && load.Message!.Subject == subject)
            {
                found.Add(seq);
            }
        }

        return found;
    }
}
