using System.Buffers;
using Courier.Protocols.Nats;
using Xunit;

namespace Courier.Protocols.Tests.Nats;

/// <summary>
/// The parser's allocation budget, measured with <see cref="GC.GetAllocatedBytesForCurrentThread"/>:
/// nothing per command once warm, and nothing sized by what a hostile client announces.
/// </summary>
public sealed class NatsParserAllocationTests
{
    private const string Traffic =
        "PUB foo.bar 5\r\nhello\r\n"
        + "PUB foo.bar _INBOX.abc 0\r\n\r\n"
        + "HPUB foo.bar 12 17\r\nNATS/1.0\r\n\r\nworld\r\n"
        + "HPUB foo.bar _INBOX.abc 12 12\r\nNATS/1.0\r\n\r\n\r\n"
        + "SUB foo.* 1\r\n"
        + "SUB foo.> q 2\r\n"
        + "UNSUB 2 10\r\n"
        + "PING\r\n"
        + "PONG\r\n";

    private const int TrafficCommands = 9;

    // How often the measured loop parses the buffer, so that a stray allocation anywhere shows.
    private const int Rounds = 100;

    // A hostile line may cost a few bytes of bookkeeping, never anything sized by its claim. Bytes.
    private const long HostileBudget = 1024;

    [Fact]
    public void Parsing_commands_in_a_single_segment_allocates_nothing_after_warm_up() =>
        AssertParsesWithoutAllocating(new ReadOnlySequence<byte>(ParserFeeds.Bytes(Traffic)));

    [Fact]
    public void Parsing_commands_split_byte_by_byte_over_segments_allocates_nothing_after_warm_up() =>
        AssertParsesWithoutAllocating(Sequences.ByteByByte(ParserFeeds.Bytes(Traffic)));

    [Fact]
    public void Parsing_commands_split_into_chunks_allocates_nothing_after_warm_up() =>
        AssertParsesWithoutAllocating(Sequences.FromChunks(Sequences.Chunk(ParserFeeds.Bytes(Traffic), 7)));

    [Fact]
    public void Reading_a_cut_short_command_allocates_nothing_after_warm_up()
    {
        var parser = new NatsParser();
        var buffer = Sequences.ByteByByte(ParserFeeds.Bytes("PING\r\nPUB foo.bar 11\r\nhello"));
        ParseAll(parser, buffer, out _);

        var before = GC.GetAllocatedBytesForCurrentThread();
        var commands = 0;
        for (var i = 0; i < Rounds; i++)
        {
            commands += ParseAll(parser, buffer, out _);
        }

        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(Rounds, commands);
        Assert.Equal(0, allocated);
    }

    [Fact]
    public void A_pub_announcing_a_gigabyte_is_rejected_without_allocating_for_it()
    {
        var parser = new NatsParser();
        var buffer = new ReadOnlySequence<byte>(ParserFeeds.Bytes("PUB foo 1073741824\r\n"));
        TryReadOnce(parser, buffer, out _, out _);

        var before = GC.GetAllocatedBytesForCurrentThread();
        var status = TryReadOnce(parser, buffer, out var error, out _);
        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.Equal(ParseStatus.Error, status);
        Assert.Equal(ParseError.MaxPayloadViolation, error);
        Assert.InRange(allocated, 0, HostileBudget);
    }

    [Fact]
    public void A_pub_announcing_a_gigabyte_under_a_gigabyte_limit_waits_without_allocating_for_it()
    {
        var parser = new NatsParser(maxPayload: int.MaxValue);
        var buffer = Sequences.SplitAt(ParserFeeds.Bytes("PUB foo 1073741824\r\nsome of it"), 10);
        TryReadOnce(parser, buffer, out _, out _);

        var before = GC.GetAllocatedBytesForCurrentThread();
        var status = TryReadOnce(parser, buffer, out var error, out var consumed);
        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.Equal(ParseStatus.NeedMoreData, status);
        Assert.Equal(ParseError.None, error);
        Assert.Equal(0, consumed);
        Assert.InRange(allocated, 0, HostileBudget);
    }

    [Fact]
    public void A_control_line_with_no_lf_over_the_limit_is_rejected_without_allocating_for_it()
    {
        var parser = new NatsParser();
        var buffer = Sequences.FromChunks(Sequences.Chunk(ParserFeeds.Bytes("SUB " + new string('a', 64 * 1024)), 4096));
        TryReadOnce(parser, buffer, out _, out _);

        var before = GC.GetAllocatedBytesForCurrentThread();
        var status = TryReadOnce(parser, buffer, out var error, out _);
        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.Equal(ParseStatus.Error, status);
        Assert.Equal(ParseError.MaxControlLineExceeded, error);
        Assert.InRange(allocated, 0, HostileBudget);
    }

    private static void AssertParsesWithoutAllocating(ReadOnlySequence<byte> buffer)
    {
        var parser = new NatsParser();
        for (var i = 0; i < 3; i++)
        {
            ParseAll(parser, buffer, out _);
        }

        var before = GC.GetAllocatedBytesForCurrentThread();
        var commands = 0;
        long payloadBytes = 0;
        for (var i = 0; i < Rounds; i++)
        {
            commands += ParseAll(parser, buffer, out var bytes);
            payloadBytes += bytes;
        }

        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(Rounds * TrafficCommands, commands);
        Assert.Equal(Rounds * (5 + 0 + 17 + 12), payloadBytes);
        Assert.Equal(0, allocated);
    }

    // Reads every command in the buffer and sums the payload sizes, as a connection would use them.
    private static int ParseAll(NatsParser parser, ReadOnlySequence<byte> buffer, out long payloadBytes)
    {
        var reader = new SequenceReader<byte>(buffer);
        var command = default(ClientCommand);
        var count = 0;
        payloadBytes = 0;
        while (parser.TryRead(ref reader, ref command, out _) == ParseStatus.Command)
        {
            count++;
            payloadBytes += command.Payload.Length;
        }

        return count;
    }

    private static ParseStatus TryReadOnce(NatsParser parser, ReadOnlySequence<byte> buffer, out ParseError error, out long consumed)
    {
        var reader = new SequenceReader<byte>(buffer);
        var command = default(ClientCommand);
        var status = parser.TryRead(ref reader, ref command, out error);
        consumed = reader.Consumed;
        return status;
    }
}
