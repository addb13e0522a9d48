namespace Courier.Storage;

/// <summary>Messages, first and last sequence of one subject or filter (nats-server's <c>SimpleState</c>).</summary>
public readonly record struct SubjectState(ulong Msgs, ulong First, ulong Last);
