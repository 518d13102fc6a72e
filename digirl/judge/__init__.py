"""Autonomous success judges: a VLM behind any OpenAI-compatible endpoint decides whether a
screenshot shows the task accomplished (DigiRL's reward for Android tasks). See docs/judge.md."""

from digirl.judge.base import JudgeError, JudgeUnavailable, JudgeVerdict, SuccessJudge
from digirl.judge.vlm import VLMJudge

__all__ = ["JudgeError", "JudgeUnavailable", "JudgeVerdict", "SuccessJudge", "VLMJudge"]
