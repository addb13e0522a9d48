using Courier.Protocols.Nats;

namespace Courier.Protocols.Tests.Nats;

/// <summary>
/// What a run of <see cref="NatsParser.TryRead"/> calls produced: the commands in order, then how
/// it stopped (<see cref="ParseStatus.NeedMoreData"/> with the bytes left unconsumed, or an error).
/// </summary>
internal sealed record ParseOutcome(IReadOnlyList<ParsedCommand> Commands, ParseStatus Final, ParseError Error, long Unconsumed)
{
    /// <summary>All input read as <paramref name="commands"/>, nothing left over.</summary>
    public static ParseOutcome Complete(params ParsedCommand[] commands) => new(commands, ParseStatus.NeedMoreData, ParseError.None, 0);

    /// <summary><paramref name="commands"/> read, then <paramref name="unconsumed"/> bytes waiting for more.</summary>
    public static ParseOutcome Partial(long unconsumed, params ParsedCommand[] commands) =>
        new(commands, ParseStatus.NeedMoreData, ParseError.None, unconsumed);

    /// <summary><paramref name="commands"/> read, then <paramref name="error"/> (reader position undefined).</summary>
    public static ParseOutcome Rejected(ParseError error, params ParsedCommand[] commands) =>
        new(commands, ParseStatus.Error, error, -1);

    public bool Equals(ParseOutcome? other) =>
        other is not null
        && Final == other.Final
        && Error == other.Error
        && Unconsumed == other.Unconsumed
        && Commands.SequenceEqual(other.Commands);

    public override int GetHashCode() => HashCode.Combine(Final, Error, Unconsumed, Commands.Count);

    public override string ToString() =>
        $"{Final} {Error} unconsumed {Unconsumed} after {Commands.Count} command(s):"
        + string.Concat(Commands.Select(c => "\n    " + c));
}
