using System.Buffers;
using System.Text;
using Courier.Protocols.Nats;
using Xunit;

namespace Courier.Protocols.Tests.Nats;

/// <summary>
/// Feeds one input to fresh parsers every way a connection could deliver it and checks that every
/// delivery parses the same: whole; byte by byte, each byte its own segment; split into two
/// segments at every position; and incrementally as a pipe would, growing the buffered bytes a
/// chunk at a time and calling TryRead until NeedMoreData, never letting NeedMoreData move the reader.
/// </summary>
internal static class ParserFeeds
{
    // Arrival sizes for the pipe-like feeds, bytes: one byte at a time, and a few odd sizes that
    // put the chunk edges at different places in each command.
    private static readonly int[] ArrivalSizes = [1, 2, 3, 7];

    /// <summary>Latin-1 bytes: each char of <paramref name="text"/> is one byte.</summary>
    public static byte[] Bytes(string text) => Encoding.Latin1.GetBytes(text);

    /// <summary>Asserts every delivery of <paramref name="input"/> gives <paramref name="expected"/>.</summary>
    public static void AssertEveryFeeding(Func<NatsParser> create, string input, ParseOutcome expected) =>
        AssertEveryFeeding(create, Bytes(input), expected);

    /// <inheritdoc cref="AssertEveryFeeding(Func{NatsParser}, string, ParseOutcome)"/>
    public static void AssertEveryFeeding(Func<NatsParser> create, byte[] input, ParseOutcome expected)
    {
        foreach (var (feeding, outcome) in EveryFeeding(create, input))
        {
            Assert.True(expected.Equals(outcome), $"{feeding}\nexpected: {expected}\nactual:   {outcome}");
        }
    }

    /// <summary>
    /// Asserts every delivery of <paramref name="input"/> agrees with the whole-input parse, and returns it.
    /// </summary>
    public static ParseOutcome AssertEveryFeedingAgrees(Func<NatsParser> create, byte[] input)
    {
        var whole = Run(create(), new ReadOnlySequence<byte>(input));
        AssertEveryFeeding(create, input, whole);
        return whole;
    }

    /// <summary>Each way to deliver <paramref name="input"/>, named, with what the parser made of it.</summary>
    public static IEnumerable<(string Feeding, ParseOutcome Outcome)> EveryFeeding(Func<NatsParser> create, byte[] input)
    {
        yield return ("whole", Run(create(), new ReadOnlySequence<byte>(input)));
        yield return ("byte by byte", Run(create(), Sequences.ByteByByte(input)));
        for (var i = 0; i <= input.Length; i++)
        {
            yield return ($"split at {i}", Run(create(), Sequences.SplitAt(input, i)));
        }

        foreach (var size in ArrivalSizes)
        {
            yield return ($"pipe, {size} byte(s) per read, one segment per read", Incremental(create(), input, size, segmentPerRead: true));
            yield return ($"pipe, {size} byte(s) per read, contiguous buffer", Incremental(create(), input, size, segmentPerRead: false));
        }
    }

    /// <summary>Calls TryRead until it needs more data or fails, checking the reader contract on each call.</summary>
    public static ParseOutcome Run(NatsParser parser, ReadOnlySequence<byte> buffer)
    {
        var commands = new List<ParsedCommand>();
        var reader = new SequenceReader<byte>(buffer);
        var command = default(ClientCommand);
        while (true)
        {
            var before = reader.Consumed;
            var status = parser.TryRead(ref reader, ref command, out var error);
            switch (status)
            {
                case ParseStatus.Command:
                    Assert.Equal(ParseError.None, error);
                    Assert.True(reader.Consumed > before, "a command must consume input");
                    commands.Add(ParsedCommand.From(command));
                    break;
                case ParseStatus.NeedMoreData:
                    Assert.Equal(ParseError.None, error);
                    Assert.Equal(before, reader.Consumed);
                    return new ParseOutcome(commands, status, error, reader.Remaining);
                default:
                    Assert.NotEqual(ParseError.None, error);
                    return new ParseOutcome(commands, status, error, -1);
            }
        }
    }

    /// <summary>
    /// Delivers <paramref name="input"/> <paramref name="readSize"/> bytes at a time, as a pipe would:
    /// each round parses what is buffered and not yet consumed, then drops what was consumed.
    /// </summary>
    public static ParseOutcome Incremental(NatsParser parser, byte[] input, int readSize, bool segmentPerRead)
    {
        var commands = new List<ParsedCommand>();
        var reads = Sequences.Chunk(input, readSize);
        long consumed = 0;
        var received = 0;
        for (var r = 0; r < reads.Count; r++)
        {
            received += reads[r].Length;
            var buffered = segmentPerRead
                ? Sequences.FromChunks(reads.GetRange(0, r + 1)).Slice(consumed)
                : new ReadOnlySequence<byte>(input[(int)consumed..received]);
            var round = Run(parser, buffered);
            commands.AddRange(round.Commands);
            if (round.Final == ParseStatus.Error)
            {
                return new ParseOutcome(commands, round.Final, round.Error, -1);
            }

            consumed += buffered.Length - round.Unconsumed;
        }

        return new ParseOutcome(commands, ParseStatus.NeedMoreData, ParseError.None, input.Length - consumed);
    }
}
