using Xunit;

namespace Courier.Storage.Tests;

/// <summary>Random operations checked against a plain reference model of the semantics.</summary>
public abstract partial class StreamStoreTests
{
    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void Random_operations_agree_with_a_reference_model(int seed)
    {
        const int maxPerSubject = 4;
        const int maxMsgs = 150;
        var store = Create(new StoreConfig { MaxMsgsPerSubject = maxPerSubject, MaxMsgs = maxMsgs });
        var model = new SortedDictionary<ulong, (string Subject, string Payload)>();
        ulong last = 0;
        var random = new Random(seed);
        string[] subjects = [.. Enumerable.Range(0, 40).Select(i => $"k.{i % 5}.{i}")];

        for (var op = 0; op < 2500; op++)
        {
            var dice = random.Next(100);
            if (dice < 70)
            {
                var subject = subjects[random.Next(subjects.Length)];
                var payload = new string('x', random.Next(0, 40));
                Assert.Equal(++last, PutOk(store, subject, payload));
                model[last] = (subject, payload);
                while (model.Count(kv => kv.Value.Subject == subject) > maxPerSubject)
                {
                    model.Remove(model.First(kv => kv.Value.Subject == subject).Key);
                }

                while (model.Count > maxMsgs)
                {
                    model.Remove(model.First().Key);
                }
            }
            else if (dice < 88 && last > 0)
            {
                var seq = (ulong)random.NextInt64(1, (long)last + 1);
                Assert.Equal(model.Remove(seq), store.RemoveMessage(seq));
            }
            else if (dice < 92)
            {
                var filter = random.Next(2) == 0 ? subjects[random.Next(subjects.Length)] : $"k.{random.Next(5)}.*";
                var keep = (ulong)random.Next(0, 3);
                var matching = model.Where(kv => Matches(kv.Value.Subject, filter)).Select(kv => kv.Key).ToList();
                var expected = keep >= (ulong)matching.Count ? 0 : matching.Count - (int)keep;
                Assert.Equal((ulong)expected, store.Purge(filter, 0, keep));
                foreach (var seq in matching.Take(expected))
                {
                    model.Remove(seq);
                }
            }
            else if (dice < 95 && model.Count > 0)
            {
                var to = model.Keys.First() + (ulong)random.Next(0, 20);
                var expected = model.Keys.Count(k => k < to);
                Assert.Equal((ulong)expected, store.Compact(to));
                foreach (var seq in model.Keys.Where(k => k < to).ToList())
                {
                    model.Remove(seq);
                }

                last = Math.Max(last, to - 1);
            }
            else if (dice < 97)
            {
                store.Flush();
            }
            else if (dice < 98)
            {
                store.Flush();
                store = Reopen(store);
            }

            if (op % 50 == 0 || op == 2499)
            {
                AssertAgrees(store, model, last);
            }
        }

        store.Flush();
        AssertAgrees(Reopen(store), model, last);
    }

    private void AssertAgrees(IStreamStore store, SortedDictionary<ulong, (string Subject, string Payload)> model, ulong last)
    {
        var state = store.State();
        // A store that never held a message reports first 0 (1 once purged), as nats-server.
        var first = model.Count > 0 ? model.Keys.First() : last == 0 ? Math.Min(state.FirstSeq, 1) : last + 1;
        Assert.Equal((ulong)model.Count, state.Msgs);
        Assert.Equal(first, state.FirstSeq);
        Assert.Equal(last, state.LastSeq);
        Assert.Equal(model.Count > 0 ? last - first + 1 - (ulong)model.Count : 0, state.NumDeleted);
        Assert.Equal(model.Values.Select(v => v.Subject).Distinct().Count(), state.NumSubjects);
        Assert.Equal((ulong)model.Values.Sum(v => (long)Size(v.Subject, v.Payload)), state.Bytes);

        var expectedSubjects = model.GroupBy(kv => kv.Value.Subject).ToDictionary(
            g => g.Key,
            g => new SubjectState((ulong)g.Count(), g.Min(kv => kv.Key), g.Max(kv => kv.Key)));
        var actual = store.SubjectsState(null);
        Assert.Equal(expectedSubjects.Count, actual.Count);
        foreach (var (subject, expected) in expectedSubjects)
        {
            Assert.Equal(expected, actual[subject]);
            Assert.Equal(expected.Last, store.LoadLastMessage(subject).Message!.Sequence);
        }

        foreach (var (seq, (subject, payload)) in model)
        {
            var m = Load(store, seq);
            Assert.Equal(subject, m.Subject);
            Assert.Equal(payload, S(m.Payload));
        }

        var next = store.LoadNextMessage("k.3.*", 0);
        var expectedNext = model.FirstOrDefault(kv => Matches(kv.Value.Subject, "k.3.*")).Key;
        Assert.Equal(expectedNext, next.Found ? next.Message!.Sequence : 0);
    }
}
