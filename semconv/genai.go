package semconv

// Values of the tool-call attributes (see AttrGenAIOperationName).
const (
	// GenAIExecuteTool is gen_ai.operation.name for a tool call.
	GenAIExecuteTool = "execute_tool"
	// GenAIToolTypeFunction is gen_ai.tool.type for a tool that the agent's
	// own runtime executes, as the sandbox session does.
	GenAIToolTypeFunction = "function"
	// OpenInferenceKindTool is openinference.span.kind for a tool call.
	OpenInferenceKindTool = "TOOL"
)
