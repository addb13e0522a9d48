using System.Buffers;
using Xunit;

namespace Courier.Raft.Tests;

/// <summary>The frame Raft traffic travels in between two nodes.</summary>
public sealed class RaftCodecTests
{
    private static List<(string, RaftMessage)> RandomBatch(Random random)
    {
        var batch = new List<(string, RaftMessage)>();
        for (var i = random.Next(1, 20); i > 0; i--)
        {
            var entries = new Entry[random.Next(0, 4)];
            for (var e = 0; e < entries.Length; e++)
            {
                var data = new byte[random.Next(0, 300)];
                random.NextBytes(data);
                entries[e] = new Entry((ulong)random.NextInt64(), (ulong)random.NextInt64(), (EntryType)random.Next(2), data);
            }
            Snapshot? snapshot = null;
            if (random.Next(5) == 0)
            {
                var data = new byte[random.Next(0, 100)];
                random.NextBytes(data);
                snapshot = new Snapshot(new SnapshotMeta((ulong)random.NextInt64(), (ulong)random.NextInt64(), new Configuration([1, 2, 3], [(ulong)random.Next(4, 9)])), data);
            }
            batch.Add(($"S-{random.Next(1000)}-ストリーム", new RaftMessage
            {
                Type = (MessageType)random.Next(1, 11),
                From = (ulong)random.NextInt64(),
                To = (ulong)random.NextInt64(),
                Term = (ulong)random.NextInt64(),
                LogTerm = (ulong)random.NextInt64(),
                Index = (ulong)random.NextInt64(),
                Commit = (ulong)random.NextInt64(),
                RejectHint = (ulong)random.NextInt64(),
                Reject = random.Next(2) == 0,
                Transfer = random.Next(2) == 0,
                Entries = entries,
                Snapshot = snapshot,
            }));
        }
        return batch;
    }

    private static byte[] Encode(List<(string, RaftMessage)> batch)
    {
        var buffer = new ArrayBufferWriter<byte>();
        RaftCodec.Write(buffer, batch);
        Assert.Equal(RaftCodec.Size(batch), buffer.WrittenCount);
        return buffer.WrittenSpan.ToArray();
    }

    [Fact]
    public void Every_field_of_every_message_survives_a_round_trip()
    {
        var random = new Random(1);
        for (var round = 0; round < 300; round++)
        {
            var batch = RandomBatch(random);
            var decoded = RaftCodec.Read(Encode(batch));
            Assert.Equal(batch.Count, decoded.Count);
            for (var i = 0; i < batch.Count; i++)
            {
                var (group, m) = batch[i];
                var (g2, d) = decoded[i];
                Assert.Equal(group, g2);
                Assert.Equal(m.ToString(), d.ToString());
                Assert.Equal((m.Type, m.From, m.To, m.Term, m.LogTerm, m.Index, m.Commit, m.RejectHint, m.Reject, m.Transfer),
                             (d.Type, d.From, d.To, d.Term, d.LogTerm, d.Index, d.Commit, d.RejectHint, d.Reject, d.Transfer));
                Assert.Equal(m.Entries.Select(e => (e.Term, e.Index, e.Type, Convert.ToHexString(e.Data.Span))),
                             d.Entries.Select(e => (e.Term, e.Index, e.Type, Convert.ToHexString(e.Data.Span))));
                Assert.Equal(m.Snapshot is null, d.Snapshot is null);
                if (m.Snapshot is { } s)
                {
                    Assert.Equal((s.Meta.Index, s.Meta.Term), (d.Snapshot!.Meta.Index, d.Snapshot.Meta.Term));
                    Assert.Equal(s.Meta.Configuration.Voters, d.Snapshot.Meta.Configuration.Voters);
                    Assert.Equal(s.Meta.Configuration.Learners, d.Snapshot.Meta.Configuration.Learners);
                    Assert.Equal(s.Data.ToArray(), d.Snapshot.Data.ToArray());
                }
            }
        }
    }

    [Fact]
    public void A_frame_cut_anywhere_or_with_a_flipped_byte_is_refused_cleanly()
    {
        var random = new Random(2);
        var frame = Encode(RandomBatch(random));
        for (var length = 0; length < frame.Length; length++)
            Assert.Throws<InvalidDataException>(() => RaftCodec.Read(frame.AsMemory(0, length)));
        for (var i = 0; i < 2000; i++)
        {
            var damaged = (byte[])frame.Clone();
            damaged[random.Next(damaged.Length)] ^= (byte)random.Next(1, 256);
            try
            {
                RaftCodec.Read(damaged); // a flip inside data or a number is still a well-formed frame
            }
            catch (InvalidDataException)
            {
            }
        }
    }

    [Fact]
    public void A_huge_count_is_refused_before_anything_is_allocated()
    {
        byte[] frame = [RaftCodec.Version, 0xFF, 0xFF, 0xFF, 0x7F];
        Assert.Throws<InvalidDataException>(() => RaftCodec.Read(frame));
    }
}
