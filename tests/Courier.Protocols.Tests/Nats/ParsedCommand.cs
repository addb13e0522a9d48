using System.Text;
using Courier.Protocols.Nats;

namespace Courier.Protocols.Tests.Nats;

/// <summary>
/// An owned, comparable copy of a <see cref="ClientCommand"/> (whose spans die at the next read).
/// Text fields are Latin-1 so every byte maps to exactly one char and payloads compare byte for byte.
/// </summary>
internal sealed record ParsedCommand(
    ClientOp Op,
    string Subject = "",
    string ReplyTo = "",
    string Queue = "",
    string Sid = "",
    long Max = 0,
    int HeaderSize = 0,
    string Payload = "",
    string Arguments = "")
{
    public static readonly ParsedCommand Ping = new(ClientOp.Ping);
    public static readonly ParsedCommand Pong = new(ClientOp.Pong);
    public static readonly ParsedCommand Ok = new(ClientOp.Ok);

    public static ParsedCommand From(scoped in ClientCommand command) => new(
        command.Op,
        Text(command.Subject),
        Text(command.ReplyTo),
        Text(command.Queue),
        Text(command.Sid),
        command.Max,
        command.HeaderSize,
        Encoding.Latin1.GetString(command.Payload),
        Text(command.Arguments));

    public static ParsedCommand Pub(string subject, string payload, string replyTo = "") =>
        new(ClientOp.Pub, subject, replyTo, HeaderSize: -1, Payload: payload);

    public static ParsedCommand HPub(string subject, int headerSize, string payload, string replyTo = "") =>
        new(ClientOp.HPub, subject, replyTo, HeaderSize: headerSize, Payload: payload);

    public static ParsedCommand Sub(string subject, string sid, string queue = "") =>
        new(ClientOp.Sub, subject, Queue: queue, Sid: sid);

    public static ParsedCommand Unsub(string sid, long max = -1) => new(ClientOp.Unsub, Sid: sid, Max: max);

    public static ParsedCommand Connect(string json) => new(ClientOp.Connect, Arguments: json);

    public static ParsedCommand Info(string json) => new(ClientOp.Info, Arguments: json);

    public static ParsedCommand Err(string text) => new(ClientOp.Err, Arguments: text);

    public override string ToString() =>
        $"{Op}(subject '{Escape(Subject)}', reply '{Escape(ReplyTo)}', queue '{Escape(Queue)}', sid '{Escape(Sid)}', "
        + $"max {Max}, hdr {HeaderSize}, payload '{Escape(Payload)}', args '{Escape(Arguments)}')";

    private static string Text(ReadOnlySpan<byte> bytes) => Encoding.Latin1.GetString(bytes);

    private static string Escape(string s) => s.Replace("\r", "\\r").Replace("\n", "\\n").Replace("\t", "\\t");
}
